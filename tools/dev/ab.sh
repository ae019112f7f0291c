#!/bin/sh
# Interleaved A/B of two builds on one benchmark program: runs A and B in
# turn RUNS times and prints each build's median of a RESULT field, so the
# machine's drift hits both alike (what the before/after figures in the
# commit messages and closing notes were taken with).
#
#   tools/dev/ab.sh [-n RUNS] [-f FIELD] [-t] [-a VAR=VALUE] [-b VAR=VALUE] BUILD_A BUILD_B PROGRAM [ARGS...]
#   tools/dev/ab.sh -n 7 /tmp/base-build build bench-alloc-sgc -t 2 -m free -r 500
#   SGC_MARKERS=1 tools/dev/ab.sh -t -f mark_ns /tmp/base-build build bench-gcbench-sgc -t 1
#   tools/dev/ab.sh -a SGC_LPS_K=1 -b SGC_LPS_K=1.5 build build bench-cky-sgc -t 2
#
# FIELD is a key of the program's RESULT line (default mops; wall_s for
# programs that report no rate).  With -t, FIELD is instead a numeric key
# of sgc's SGC_TRACE records, summed over the run's collections (e.g.
# -t mark_ns: the run's total mark time; sgc builds only).  -t -f
# mark_rate is the run's marked bytes over its mark time, in MB/s; -t -f
# max:KEY the largest KEY of the run's records (max:pause_ns, its worst
# pause).  Environment
# variables pass through to both sides; -a and -b (repeatable) add
# settings to one side only, so a build can be compared with itself under
# two settings.  The last line is the median over runs of B's value
# divided by A's in the same run.
set -eu
runs=5 field=mops trace=0 env_a= env_b=
usage="usage: $0 [-n RUNS] [-f FIELD] [-t] [-a VAR=VALUE] [-b VAR=VALUE] BUILD_A BUILD_B PROGRAM [ARGS...]"
while getopts n:f:ta:b: opt; do
  case $opt in
  n) runs=$OPTARG ;;
  f) field=$OPTARG ;;
  t) trace=1 ;;
  a) env_a="$env_a $OPTARG" ;;
  b) env_b="$env_b $OPTARG" ;;
  *) echo "$usage" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 3 ] || { echo "$usage" >&2; exit 2; }
a=$1 b=$2 prog=$3
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
while [ $i -lt "$runs" ]; do
  # ABBA order: whichever side runs first in a pair alternates, so an
  # effect of running first or second (an A/A of one build gave 0.78 with
  # A always first) cancels out.
  if [ $((i % 2)) = 0 ]; then order="a b"; else order="b a"; fi
  for side in $order; do
    if [ $side = a ]; then dir=$a settings=$env_a; else dir=$b settings=$env_b; fi
    # $settings is unquoted on purpose: VAR=VALUE words for env.
    if [ $trace = 1 ]; then
      rm -f "$tmp/trace"
      env $settings SGC_TRACE="$tmp/trace" "$dir/bench/$prog" "$@" >/dev/null 2>&1
      if [ "$field" = mark_rate ]; then
        # The run's marked bytes over its mark time (MB/s): unlike a
        # total of mark_ns, comparable between runs that collect
        # different amounts (programs with several mutator threads).
        sed -n 's/.*"mark_ns":\([0-9]*\).*"marked_bytes":\([0-9]*\).*/\1 \2/p' "$tmp/trace" |
          awk '{ns += $1; b += $2} END {print ns ? b * 1000 / ns : 0}' >>"$tmp/$side"
      elif [ "${field#max:}" != "$field" ]; then
        sed -n "s/.*\"${field#max:}\":\([0-9.]*\).*/\1/p" "$tmp/trace" |
          awk '$1 > m {m = $1} END {print m + 0}' >>"$tmp/$side"
      else
        sed -n "s/.*\"$field\":\([0-9.]*\).*/\1/p" "$tmp/trace" |
          awk '{s += $1} END {print s + 0}' >>"$tmp/$side"
      fi
    else
      env $settings "$dir/bench/$prog" "$@" 2>&1 |
        sed -n "s/.*RESULT.* $field=\([0-9.]*\).*/\1/p" >>"$tmp/$side"
    fi
  done
  i=$((i + 1))
done
for side in a b; do
  if [ $side = a ]; then label="$a$env_a"; else label="$b$env_b"; fi
  printf '%s: median %s of %s runs (%s)\n' "$label" \
    "$(sort -n "$tmp/$side" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')" \
    "$(wc -l <"$tmp/$side" | tr -d ' ')" "$(sort -n "$tmp/$side" | tr '\n' ' ' | sed 's/ $//')"
done
# The machine drifts between a fast and a slow phase within minutes; a
# pair (A then B, one right after the other) mostly shares its phase, so
# the median of the pairs' B/A ratios says more than the two medians.
printf 'B/A: median of %s paired ratios %s\n' "$(wc -l <"$tmp/a" | tr -d ' ')" \
  "$(paste "$tmp/a" "$tmp/b" | awk '$1 > 0 {print $2 / $1}' | sort -n |
     awk '{v[NR]=$1} END {if (NR) printf "%.3f", v[int((NR+1)/2)]}')"

