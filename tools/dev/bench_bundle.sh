#!/bin/sh
# The benchmarks for a machine without the build tools or the peers'
# packages (a larger machine lent for an hour, with no network): pack them
# here, unpack them there, then run bench/run.py or tools/dev/larger_machine.sh.
#
#   tools/dev/bench_bundle.sh pack DIR [BUILD]   # BUILD: a Release build (default /tmp/wt-build)
#   tools/dev/bench_bundle.sh unpack DIR         # on the other machine, as root
#
# pack copies BUILD's benchmark binaries, libsgc and the predictor's tools
# (tools/predict: sgc-calibrate, sgc-predict, sgc-fast-replay), the peers' shared
# libraries (bdwgc's libgc, jemalloc, tcmalloc, mimalloc, as this machine's
# packages have them) and bundle.env (the commit, the versions).  unpack
# puts the build back at the same path, which the binaries' RUNPATH names,
# and the peers in /usr/local/lib, and runs ldconfig, so that bench/run.py
# finds everything as it would here.  Both machines must be x86-64 with a
# glibc at least as new as this one's.
set -eu
mode=${1:?usage: tools/dev/bench_bundle.sh pack|unpack DIR [BUILD]}
dir=${2:?usage: tools/dev/bench_bundle.sh pack|unpack DIR [BUILD]}
peers="libgc.so.1 libjemalloc.so.2 libtcmalloc_minimal.so.4 libmimalloc.so.2"

case $mode in
pack)
  build=$(cd "${3:-/tmp/wt-build}" && pwd)
  grep -q 'CMAKE_BUILD_TYPE:STRING=Release' "$build/CMakeCache.txt" ||
    { echo "bench_bundle: $build is not a Release build" >&2; exit 1; }
  rm -rf "$dir" && mkdir -p "$dir/build/bench" "$dir/build/src" "$dir/build/tools/predict" "$dir/peers"
  cp -a "$build"/bench/bench-* "$dir/build/bench/"
  cp -a "$build"/tools/predict/sgc-* "$dir/build/tools/predict/"
  cp -a "$build"/src/libsgc.so* "$dir/build/src/"
  for soname in $peers; do
    path=$(/sbin/ldconfig -p | awk -v s="$soname" '$1 == s && /x86-64/ { print $NF; exit }')
    [ -n "$path" ] || { echo "bench_bundle: $soname not installed (tools/ci/install-deps.sh)" >&2; exit 1; }
    cp -L "$path" "$dir/peers/$soname"
  done
  repo=$(cd "$(dirname "$0")/../.." && pwd)
  {
    echo "SGC_BENCH_BUILD=$build"
    echo "SGC_BENCH_COMMIT=$(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" status --porcelain -- src include bench | grep -q . && echo -dirty)"
    echo "SGC_BENCH_LIBGC=$(dpkg-query -W -f='${Version}' libgc1 2>/dev/null)"
    echo "SGC_BENCH_GCC=\"$(gcc --version | head -1)\""
  } >"$dir/bundle.env"
  echo "bench_bundle: $(du -sh "$dir" | cut -f1) in $dir"
  ;;
unpack)
  . "$dir/bundle.env"
  mkdir -p "$SGC_BENCH_BUILD"
  cp -a "$dir/build/." "$SGC_BENCH_BUILD/"
  # tools/dev/larger_machine.sh reads it there, so the reports name the
  # bundle's commit, compiler and bdwgc rather than this machine's
  cp "$dir/bundle.env" "$SGC_BENCH_BUILD/bundle.env"
  cp -a "$dir"/peers/* /usr/local/lib/
  ldconfig
  for soname in $peers; do
    ldconfig -p | grep -q "^[[:space:]]*$soname " || { echo "bench_bundle: $soname not found after ldconfig" >&2; exit 1; }
  done
  "$SGC_BENCH_BUILD/bench/bench-gcbench-bdwgc" -S 10 -L 8 -M 8 -A 1000 -t 1 >/dev/null
  "$SGC_BENCH_BUILD/bench/bench-gcbench-sgc" -S 10 -L 8 -M 8 -A 1000 -t 1 >/dev/null
  echo "bench_bundle: unpacked $SGC_BENCH_COMMIT into $SGC_BENCH_BUILD"
  ;;
*) echo "usage: tools/dev/bench_bundle.sh pack|unpack DIR [BUILD]" >&2; exit 2 ;;
esac
