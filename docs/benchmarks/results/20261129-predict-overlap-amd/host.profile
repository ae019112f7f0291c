# sgc-calibrate on a quiet machine (20261129-predict-vs-measured-amd/host.profile),
# with the keys of the overlap model measured on the same machine while shared
# (sgc-calibrate, this commit: read_overlap_ns, read_stream_ns, cache_cpus; the
# occupancy is the faster of the random chases and all CPUs streaming).
name calibrated
placement snapshot
cpus 2
nodes 1
read_miss_ns 198.45
read_remote_miss_ns 198.45
read_occupancy_ns 4.0892
rmw_miss_ns 198.232
rmw_remote_miss_ns 198.232
rmw_occupancy_ns 12.1394
marker_miss_ns 52.9829
object_ns 2.23365
word_ns 0.573119
steal_ns 100.809
join_ns 28282
marker_ns 2734
cache_bytes 33554432
cache_ways 16
line_bytes 64
read_overlap_ns 11.4851
read_stream_ns 4.00624
cache_cpus 2
