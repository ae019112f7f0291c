#!/bin/sh
# Builds sgc with optimisation and assertions on, then runs the test suite.
# Usage: tools/ci/test.sh [extra ctest arguments]
set -e
cd "$(dirname "$0")/../.."
tools/ci/configure.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2
ctest --test-dir build --output-on-failure -j2 "$@"
