#!/bin/sh
# Prints how many times longer than on a quiet machine work takes here now
# (at least 1.0, at most 10.0, one decimal): the factor the test suite's
# time limits are multiplied by, so that a slow or busy machine gets
# longer limits instead of failures (tests/timeouts.cmake for ctest's,
# tools/ci/bdwgc_tests.sh and tests/lib/wait_for.sh for the inner ones).
#
# The larger of two measurements:
#  - a fixed loop's wall time over the CPU time it takes on the quiet
#    reference machine (a 2-vCPU AMD EPYC VM: 0.09 s), which counts both
#    a slower CPU and a CPU shared with other work right now;
#  - the 1-minute load average over the CPUs this process may use, which
#    counts sharing over a longer stretch than the loop's 0.1 s.
# SGC_SPEED_FACTOR set to a number is printed as it is (an override).
if [ -n "${SGC_SPEED_FACTOR:-}" ]; then echo "$SGC_SPEED_FACTOR"; exit 0; fi
py=$(command -v python3 2>/dev/null) || { echo 1.0; exit 0; }
"$py" - <<'PY' 2>/dev/null || echo 1.0
import os, time
REFERENCE_S = 0.09
start = time.perf_counter()
s = 0
for i in range(1000000):
    s += i * i
wall = time.perf_counter() - start
cpus = len(os.sched_getaffinity(0)) or 1
factor = max(1.0, wall / REFERENCE_S, os.getloadavg()[0] / cpus)
print(f"{min(factor, 10.0):.1f}")
PY
