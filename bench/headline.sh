#!/bin/sh
# The README's headline benchmark: sgc vs bdwgc on GCBench and the thesis
# programs, 1 and 2 threads, 5 runs each; prints a table of medians and
# spread and writes bench/out/<timestamp>/{results.csv,report.md,*.png}.
#
#   bench/headline.sh [extra run.py options, e.g. --runs 3]
#
# Environment: BUILD_DIR (default build), JOBS (default 2),
#              NO_INSTALL=1 to never call apt-get.
set -eu

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-2}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

# ---- peers and tools --------------------------------------------------------
PKGS="cmake gcc g++ make pkg-config libgc-dev libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 python3-matplotlib"
if command -v dpkg-query >/dev/null 2>&1; then
  missing=""
  for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
      missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ] && [ "${NO_INSTALL:-0}" != 1 ] && command -v apt-get >/dev/null 2>&1; then
      echo "headline: installing$missing"
      export DEBIAN_FRONTEND=noninteractive
      apt-get install -y $missing || { apt-get update && apt-get install -y $missing; } ||
        echo "headline: could not install$missing; the runner reports them as missing"
    else
      echo "headline: not installed:$missing -- skipped (the runner reports them as missing)."
      echo "          install with: sudo apt-get install -y$missing"
    fi
  fi
else
  echo "headline: not a Debian system; make sure bdwgc (bdw-gc.pc) and matplotlib are installed"
fi

# ---- build --------------------------------------------------------------------
tools/ci/configure.sh "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release
if ! cmake --build "$BUILD_DIR" -j"$JOBS"; then
  echo "headline: the build failed; building the benchmark targets that do not need sgc" >&2
  for t in $(cmake --build "$BUILD_DIR" --target help 2>/dev/null |
             grep -oE 'bench-[a-z]+-(bdwgc|malloc)' | sort -u); do
    cmake --build "$BUILD_DIR" --target "$t" >/dev/null 2>&1 || echo "headline: $t failed to build" >&2
  done
fi

# ---- run --------------------------------------------------------------------
exec "$PY" bench/run.py --headline --build-dir "$BUILD_DIR" "$@"
