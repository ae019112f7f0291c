# SGI Origin 2000 (thesis Table 4.1): a hypercube DSM of 80 R10000s, 2 CPUs per node;
# a remote miss costs "> 590 ns" for reads, "> 1400 ns" for RMWs (the
# lower bounds are used).  Placement interleave: pages spread over the
# nodes as the thesis's collector did (ch. 3); "snapshot" puts each page
# on the node the snapshot names (all on node 0 when taken here: the
# first-touch case that made BH-st stop scaling).
name o2k
cpus 80
nodes 40
placement interleave
read_miss_ns 270
read_remote_miss_ns 590
read_occupancy_ns 230
rmw_miss_ns 850
rmw_remote_miss_ns 1400
rmw_occupancy_ns 490
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
cache_ways 2
line_bytes 128
