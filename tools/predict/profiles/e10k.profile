# Sun Ultra Enterprise 10000 (thesis Table 4.1): a crossbar SMP, memory
# interleaved over 16 system boards, so every access costs the same.
# Memory figures are the thesis's; the marker's costs (object, word,
# steal) are the host's defaults of sgc, scaled by nothing: replace them
# with figures for that machine where known.
name e10k
cpus 64
nodes 16
placement interleave
read_miss_ns 560
read_occupancy_ns 250
rmw_miss_ns 610
rmw_occupancy_ns 420
# No prefetch window on that machine: a miss costs the marker its latency.
marker_miss_ns 0
# Nor a hardware stream prefetcher the model credits: every miss costs
# its latency, and each CPU's cache is its own.
read_overlap_ns 0
read_stream_ns 0
cache_cpus 1
object_ns 60
word_ns 8
steal_ns 2000
join_ns 0
marker_ns 0
cache_bytes 4194304
cache_ways 1
line_bytes 64
