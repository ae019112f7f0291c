#!/bin/bash
# Reproduces a measured-and-rejected experiment (docs/benchmarks/history.md):
# builds COMMIT with tools/dev/experiments/NAME.diff applied, in a scratch
# worktree, and runs COMMAND in that Release build's folder.
#
#   tools/dev/experiment.sh NAME COMMIT [COMMAND...]
#   tools/dev/experiment.sh mark_line_sharing b5b45db \
#     env SGC_MARKERS=2 SGC_ADAPTIVE=0 bench/bench-bh-sgc -t 2 -m pt -s 40
#   tools/dev/experiment.sh batch_credit b5b45db tests/unit/unit_batch_credit
#
# The patches apply to the commit history.md names with them; the build
# stays in /tmp/sgc-experiment-NAME for A/B runs (tools/dev/ab.sh).  Without a
# COMMAND it only builds.  A patch removed from tools/experiments/ because
# it no longer applied to the tree (history.md, "Experiment patches
# removed") is taken from the commit before the one that removed it.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 NAME COMMIT [COMMAND...]" >&2; exit 2; }
name=$1 commit=$2
shift 2
repo=$(cd "$(dirname "$0")/../.." && pwd)
patch=$repo/tools/dev/experiments/$name.diff
kept=
if [ ! -f "$patch" ]; then
  # tools/experiments/ until tools/ was split into ci, dev and analysis.
  for old in "tools/dev/experiments/$name.diff" "tools/experiments/$name.diff"; do
    removed=$(git -C "$repo" log -1 --format=%H --diff-filter=D -- "$old")
    [ -z "$removed" ] || break
  done
  [ -n "$removed" ] || { echo "$0: no $patch, in the tree or its history" >&2; exit 2; }
  kept=$(mktemp /tmp/sgc-experiment-$name.XXXXXX.diff)
  git -C "$repo" show "$removed^:$old" >"$kept"
  patch=$kept
fi
tree=$(mktemp -d /tmp/sgc-experiment-src.XXXXXX)
build=/tmp/sgc-experiment-$name
trap 'git -C "$repo" worktree remove --force "$tree" >/dev/null 2>&1 || rm -rf "$tree"; rm -f "${kept:-}"' EXIT
git -C "$repo" worktree add -q --detach "$tree" "$commit"
git -C "$tree" apply "$patch"
cmake -S "$tree" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$build" >/dev/null
echo "$0: $name on $commit built in $build" >&2
[ $# -eq 0 ] || (cd "$build" && "$@")
