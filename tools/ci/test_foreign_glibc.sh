#!/bin/sh
# The test suite with its test programs run under another distribution's
# glibc (tools/ci/foreign_glibc.sh fetches it with apt-get): ctest starts every test that
# is a built executable through that glibc's loader (CMake's
# CROSSCOMPILING_EMULATOR); the shell-script tests and the programs they
# start use this machine's glibc.  sgc reads glibc's frames, signal
# contexts, TLS and rseq registration, whose details change between
# releases: this is how a glibc newer than Debian 12's is checked here.
#
#   tools/ci/test_foreign_glibc.sh NAME [CTEST ARGS...]   # NAME as in foreign_glibc.sh
#
# bb_bad_free is left out: it re-executes /proc/self/exe, which under the
# emulator is the loader, not the test.
set -eu
cd "$(dirname "$0")/../.."
name=${1:?usage: tools/ci/test_foreign_glibc.sh NAME [CTEST ARGS...]}
shift
build=/tmp/build-glibc-$name
# Fetch first, so a fetching problem reads as one and not as 90 failures.
tools/ci/foreign_glibc.sh "$name" /bin/true
tools/ci/configure.sh "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CROSSCOMPILING_EMULATOR=$(pwd)/tools/ci/foreign_glibc.sh;$name" >/dev/null
cmake --build "$build" -j2
ctest --test-dir "$build" --output-on-failure -j2 -E '^bb_bad_free$' "$@"
