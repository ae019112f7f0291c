#!/bin/bash
# Rounds of one benchmark program under several settings of one build, in
# rotating order (round r starts with arm r mod N), so the machine's drift
# hits every arm alike; each run's RESULT fields and its SGC_TRACE summary
# (fallbacks, worst pause counting a cycle's start pause, concurrent
# cycles, assist yields) go to a CSV, and the table printed gives each
# field's median per arm and the median of the per-round ratios of each
# arm to the first.  ab.sh compares two sides one field at a time; this
# reads every field from the same runs (what history.md's "Idle assists
# yield" table was taken with).
#
#   tools/dev/rounds.sh [-n ROUNDS] [-o CSV] -s SETTINGS [-s SETTINGS]... BUILD PROGRAM [ARGS...]
#   tools/dev/rounds.sh -n 15 -s SGC_MODE=stop -s "SGC_MODE=concurrent SGC_ASSIST_YIELD=0" \
#       -s SGC_MODE=concurrent build bench-gcbench-sgc -t 2
#
# SETTINGS is a list of VAR=VALUE words for env.
set -eu
rounds=5 csv= arms=()
usage="usage: $0 [-n ROUNDS] [-o CSV] -s SETTINGS [-s SETTINGS]... BUILD PROGRAM [ARGS...]"
while getopts n:o:s: opt; do
  case $opt in
  n) rounds=$OPTARG ;;
  o) csv=$OPTARG ;;
  s) arms+=("$OPTARG") ;;
  *) echo "$usage" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] && [ ${#arms[@]} -ge 1 ] || { echo "$usage" >&2; exit 2; }
build=$1 prog=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -n "$csv" ] || csv=$tmp/rounds.csv
fields="wall_s requests_per_s p999_us max_us mops peak_rss_kb"
echo "round,arm,$(echo $fields | tr ' ' ','),fallbacks,max_pause_ns,cycles,assist_yields" >"$csv"
n=${#arms[@]}
for ((r = 0; r < rounds; r++)); do
  for ((k = 0; k < n; k++)); do
    a=$(((k + r) % n))
    rm -f "$tmp/trace"
    # ${arms[$a]} unquoted on purpose: VAR=VALUE words for env.
    line=$(env ${arms[$a]} SGC_TRACE="$tmp/trace" "$build/bench/$prog" "$@" 2>&1 | grep RESULT || true)
    row="$r,$a"
    for f in $fields; do row="$row,$(echo "$line" | sed -n "s/.* $f=\([0-9.]*\).*/\1/p")"; done
    summary=$(python3 - "$tmp/trace" <<'EOF'
import json, sys
fallbacks = worst = cycles = yields = 0
try:
    for text in open(sys.argv[1]):
        rec = json.loads(text)
        fallbacks += rec.get("fallback", 0)
        worst = max(worst, rec.get("pause_ns", 0), rec.get("start_pause_ns", 0))
        cycles += rec.get("concurrent", 0)
        yields += rec.get("assist_yields", 0)
except FileNotFoundError:
    pass
print(f"{fallbacks},{worst},{cycles},{yields}")
EOF
)
    echo "$row,$summary" >>"$csv"
  done
done
python3 - "$csv" "${arms[@]}" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
arms = sys.argv[2:]
by_round = {}
for row in rows:
    by_round.setdefault(row["round"], {})[int(row["arm"])] = row
for i, arm in enumerate(arms):
    print(f"arm {i}: {arm}")
for field in rows[0].keys():
    if field in ("round", "arm"):
        continue
    medians, ratios = [], []
    for i in range(len(arms)):
        values = [float(r[i][field]) for r in by_round.values() if i in r and r[i][field] != ""]
        medians.append(f"{statistics.median(values):.4g}" if values else "-")
        pairs = [float(r[i][field]) / float(r[0][field]) for r in by_round.values()
                 if i in r and 0 in r and r[i][field] != "" and r[0][field] not in ("", "0")
                 and float(r[0][field]) != 0]
        ratios.append(f"{statistics.median(pairs):.3f}" if pairs and i else "")
    if all(m == "-" for m in medians):
        continue
    cells = "  ".join(f"arm {i} {m}" + (f" ({ratios[i]})" if ratios[i] else "") for i, m in enumerate(medians))
    print(f"{field:15s} {cells}")
EOF
