#!/bin/bash
# Hunts a rare hang in one file of Guile's test suite (as
# tools/ci/guile_suite.sh unpacked it): WORKERS copies at once, RUNS runs
# each, beside two busy loops; a run still going after 60 s gets every
# thread's backtrace written by gdb to OUT/hang.W.N.txt (its log beside
# it) and is killed.  LIB is the library preloaded with 4 GC threads, or
# "libgc" for Guile on libgc alone.
#
#   tools/dev/guile_suite_hunt.sh LIB FILE WORKERS RUNS OUT
#   tools/dev/guile_suite_hunt.sh build/src/libsgc.so threads.test 4 20 /tmp/hunt
#
# How the threads.test hang of 2026-11-29 was found on libgc as well
# (docs/testing.md, "Guile's own tests").
set -u
lib=${1:?LIB} file=${2:?FILE} workers=${3:?WORKERS} runs=${4:?RUNS} out=${5:?OUT}
here=$(cd "$(dirname "$0")/../.." && pwd)
work=${SGC_GUILE_WORK:-$here/build/guile-suite}
suite=$work/src/test-suite
[ -f "$suite/guile-test" ] || { echo "$0: no $suite (run tools/ci/guile_suite.sh first)" >&2; exit 2; }
export XDG_CACHE_HOME=$work/cache
mkdir -p "$out"
[ "$lib" = libgc ] || lib=$(realpath "$lib")

hunt() {
  local w=$1 i pid s dir=$out/w$1
  mkdir -p "$dir"
  for i in $(seq "$runs"); do
    if [ "$lib" = libgc ]; then
      (cd "$dir" && exec guile-3.0 -L "$suite" -e main -s "$suite/guile-test" \
         --test-suite "$suite/tests" --log-file "$dir/log" "$file" >"$dir/out" 2>&1) &
    else
      (cd "$dir" && LD_PRELOAD=$lib SGC_MARKERS=4 SGC_ADAPTIVE=0 exec guile-3.0 -L "$suite" \
         -e main -s "$suite/guile-test" --test-suite "$suite/tests" --log-file "$dir/log" \
         "$file" >"$dir/out" 2>&1) &
    fi
    pid=$!
    for s in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "hang: worker $w run $i"
      gdb -p "$pid" -batch -ex "thread apply all bt" >"$out/hang.$w.$i.txt" 2>&1
      cp "$dir/log" "$out/hang.$w.$i.log"
      kill -9 "$pid"
    fi
    wait "$pid" 2>/dev/null
  done
}

sh -c 'while :; do :; done' & busy1=$!
sh -c 'while :; do :; done' & busy2=$!
hunters=()
for w in $(seq "$workers"); do hunt "$w" & hunters+=($!); done
wait "${hunters[@]}"
kill "$busy1" "$busy2"
echo "$(ls "$out"/hang.*.txt 2>/dev/null | wc -l) hangs in $((workers * runs)) runs of $file"
