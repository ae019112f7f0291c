#!/bin/sh
# bench/retention.c as a test: structures dropped and counted back through
# disappearing links after GC_gcollect.  sgc must keep no more than a few
# -- at most one a round for each thread stopped at a barrier (a word the
# stop left in its registers), none with one thread -- in every mode, and
# no more than bdwgc where its benchmark build exists.  The explicit
# collection scanned from deep inside sgc kept 48 of 4000 with one thread
# (issue 58).
# Usage: bench_retention.sh BIN_DIR
set -u
bin=$1
rounds=20
fail=0
run() { # run LABEL BOUND ENV... : the retained count, checked against BOUND
  label=$1 bound=$2
  shift 2
  out=$(env "$@" 2>&1) || { echo "FAIL $label: $out"; fail=1; return; }
  kept=$(echo "$out" | sed -n 's/.* retained=\([0-9]*\) .*/\1/p')
  echo "$label: retained $kept (bound $bound)"
  [ -n "$kept" ] && [ "$kept" -le "$bound" ] || { echo "FAIL $label: $out"; fail=1; }
}
for t in 1 4; do
  bound=$(( (t - 1) * rounds + 5 ))
  for mode in "" "SGC_MARKERS=4 SGC_ADAPTIVE=0" "SGC_TORTURE=50" "SGC_LAB=cpu" \
              "SGC_PAGE_POLICY=ps" "SGC_PAGE_POLICY=al" "SGC_PAGE_POLICY=lps SGC_LPS_K=1.5"; do
    run "sgc -t $t ${mode:-default}" "$bound" $mode "$bin/bench-retention-sgc" -t $t -r $rounds
  done
  if [ -x "$bin/bench-retention-bdwgc" ]; then
    b=$("$bin/bench-retention-bdwgc" -t $t -r $rounds | sed -n 's/.* retained=\([0-9]*\) .*/\1/p')
    echo "bdwgc -t $t: retained $b"
  fi
done
[ $fail = 0 ] && echo "bench_retention: PASS"
exit $fail
