#!/bin/bash
# Reproduces a measured-and-rejected experiment (docs/benchmarks/history.md):
# builds COMMIT with tools/experiments/NAME.diff applied, in a scratch
# worktree, and runs COMMAND in that Release build's folder.
#
#   tools/experiment.sh NAME COMMIT [COMMAND...]
#   tools/experiment.sh mark_line_sharing b5b45db \
#     env SGC_MARKERS=2 SGC_ADAPTIVE=0 bench/bench-bh-sgc -t 2 -m pt -s 40
#   tools/experiment.sh batch_credit b5b45db tests/unit/unit_batch_credit
#
# The patches apply to the commit history.md names with them; the build
# stays in /tmp/sgc-experiment-NAME for A/B runs (tools/ab.sh).  Without a
# COMMAND it only builds.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 NAME COMMIT [COMMAND...]" >&2; exit 2; }
name=$1 commit=$2
shift 2
repo=$(cd "$(dirname "$0")/.." && pwd)
patch=$repo/tools/experiments/$name.diff
[ -f "$patch" ] || { echo "$0: no $patch" >&2; exit 2; }
tree=$(mktemp -d /tmp/sgc-experiment-src.XXXXXX)
build=/tmp/sgc-experiment-$name
trap 'git -C "$repo" worktree remove --force "$tree" >/dev/null 2>&1 || rm -rf "$tree"' EXIT
git -C "$repo" worktree add -q --detach "$tree" "$commit"
git -C "$tree" apply "$patch"
cmake -S "$tree" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$build" >/dev/null
echo "$0: $name on $commit built in $build" >&2
[ $# -eq 0 ] || (cd "$build" && "$@")
