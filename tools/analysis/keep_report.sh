#!/bin/sh
# Keeps a runner's output folder under docs/benchmarks/results: copies its
# report, results, metadata and figures, and packs its logs/ (every run's
# output and trace) as logs.tar.xz, a tenth of their size.  Unpacked, the
# kept logs made the working tree over 130 MiB, twice what a call of a lent
# machine may carry (bench/README.md, "On a larger machine").
#
#   tools/analysis/keep_report.sh RUN_DIR NAME   # e.g. bench/out/20261128-041108 20261128-041108-mark-cycle-amd
#   tools/analysis/keep_report.sh --pack DIR...  # pack the logs/ of folders already kept
#
# tar xJf logs.tar.xz in the kept folder gives the logs/ back.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
results=$repo/docs/benchmarks/results

# pack DIR: DIR/logs -> DIR/logs.tar.xz, in name order with fixed owners
# and times, so packing the same logs twice gives the same bytes.
pack() {
  [ -d "$1/logs" ] || return 0
  tar -C "$1" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - logs |
    xz -6 >"$1/logs.tar.xz.part"
  mv "$1/logs.tar.xz.part" "$1/logs.tar.xz"
  rm -rf "$1/logs"
}

if [ "${1:-}" = --pack ]; then
  shift
  for d in "$@"; do pack "$d"; done
  exit 0
fi
src=${1:?usage: tools/analysis/keep_report.sh RUN_DIR NAME | --pack DIR...}
name=${2:?usage: tools/analysis/keep_report.sh RUN_DIR NAME | --pack DIR...}
[ -f "$src/report.md" ] || { echo "keep_report: no report.md in $src" >&2; exit 1; }
dst=$results/$name
[ ! -e "$dst" ] || { echo "keep_report: $dst exists" >&2; exit 1; }
mkdir -p "$dst"
for f in "$src"/report.md "$src"/results.csv "$src"/meta.json "$src"/*.png; do
  [ -f "$f" ] && cp "$f" "$dst/"
done
[ -d "$src/logs" ] && cp -r "$src/logs" "$dst/"
pack "$dst"
echo "keep_report: $dst ($(du -sh "$dst" | cut -f1))"
