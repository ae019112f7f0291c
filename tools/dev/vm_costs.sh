#!/bin/sh
# The machine's kernel costs that bound some benchmark figures (see
# tools/dev/vm_costs.c): RUNS (default 3) runs of it, one after another.
set -e
runs=${1:-3}
cc -O2 -Wall -pthread -o /tmp/vm_costs "$(dirname "$0")/vm_costs.c"
i=0
while [ $i -lt "$runs" ]; do /tmp/vm_costs; i=$((i + 1)); done
