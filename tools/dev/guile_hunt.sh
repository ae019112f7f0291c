#!/bin/bash
# Hunts a rare hang or crash of a Guile program from
# tests/preload/guile_preload.sh run with sgc preloaded and 4 GC threads:
# runs it again and again for SECONDS seconds; a run still going after 60 s
# gets its threads' backtraces and sgc's lock counters written by gdb to
# OUT/hang.N.txt and is killed; a run that fails keeps its output in
# OUT/fail.N.txt.
#
#   tools/dev/guile_hunt.sh LIBSGC PROGRAM SECONDS OUT
#   tools/dev/guile_hunt.sh build/src/libsgc.so weak 1500 /tmp/hunt
#
# PROGRAM is one of guile_preload.sh's Scheme programs (serial, weak,
# threads).  Two hunts beside a loop of the suite's heaviest tests
# (ctest -R 'thread_suspend|cpp_api_torture|finalize_torture|
# oracle_stress_torture|threads') is how the 2026-11-23 hang was sought
# (history.md, "Two ways fresh memory was not what it should be").
set -u
lib=$(realpath "${1:?LIBSGC}") prog=${2:?PROGRAM} seconds=${3:?SECONDS} out=${4:?OUT}
mkdir -p "$out"
here=$(dirname "$0")/../..
scm="$out/$prog.scm"
sed -n "/^cat >\"\$TMP\/$prog.scm\" <<'SCM'\$/,/^SCM\$/p" "$here/tests/preload/guile_preload.sh" | sed '1d;$d' >"$scm"
[ -s "$scm" ] || { echo "$0: no program $prog in tests/preload/guile_preload.sh" >&2; exit 2; }
guile=$(command -v guile-3.0 || command -v guile) || { echo "$0: no guile" >&2; exit 77; }
end=$((SECONDS + seconds)) n=0 bad=0
while [ $SECONDS -lt $end ]; do
  n=$((n + 1))
  SGC_MARKERS=4 SGC_ADAPTIVE=0 LD_PRELOAD="$lib" "$guile" --no-auto-compile "$scm" >"$out/run.$$" 2>&1 &
  pid=$!
  for _ in $(seq 1 60); do sleep 1; kill -0 $pid 2>/dev/null || break; done
  if kill -0 $pid 2>/dev/null; then
    bad=$((bad + 1))
    echo "run $n: still running after 60 s (pid $pid): $out/hang.$n.txt"
    gdb -q -batch -p $pid -ex "print lock_starving" -ex "print lock_waiters" \
      -ex "thread apply all bt 12" >"$out/hang.$n.txt" 2>&1
    kill -9 $pid
  elif ! wait $pid; then
    bad=$((bad + 1))
    echo "run $n: failed: $out/fail.$n.txt"
    cp "$out/run.$$" "$out/fail.$n.txt"
  fi
done
rm -f "$out/run.$$"
echo "$n runs, $bad hung or failed"
[ $bad = 0 ]
