#!/bin/sh
# Configures a build folder of sgc with CMake, choosing the generator the
# same way for every script (bench/headline.sh, tools/ci/test.sh,
# tools/ci/sanitize.sh, ...), so that they can share a folder in any order:
#
#   tools/ci/configure.sh BUILD_DIR [CMAKE ARGS...]
#
# A folder configured before keeps its generator (CMake refuses another
# one there); a new folder gets Ninja when it is installed, otherwise
# CMake's default (Makefiles). A folder whose generator's tool is gone
# (made with Ninja, ninja since removed), or that was configured for
# another source tree, is cleared and configured afresh.
set -eu
cd "$(dirname "$0")/../.."
build=${1:?usage: tools/ci/configure.sh BUILD_DIR [CMAKE ARGS...]}
shift
cache=$build/CMakeCache.txt
if [ -f "$cache" ]; then
  generator=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$cache")
  home=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$cache")
  stale=
  case $generator in
  Ninja*) command -v ninja >/dev/null 2>&1 || stale="it was made with $generator and ninja is not installed" ;;
  *Makefiles) command -v make >/dev/null 2>&1 || stale="it was made with $generator and make is not installed" ;;
  esac
  if ! { [ -n "$home" ] && [ -d "$home" ] && [ "$(cd "$home" && pwd -P)" = "$(pwd -P)" ]; }; then
    stale="it was configured for ${home:-another source tree}"
  fi
  if [ -n "$stale" ]; then
    echo "configure: clearing $build's CMake cache: $stale" >&2
    rm -rf "$cache" "$build/CMakeFiles"
  fi
fi
if [ -f "$cache" ]; then
  exec cmake -S . -B "$build" "$@"
elif command -v ninja >/dev/null 2>&1; then
  exec cmake -S . -B "$build" -G Ninja "$@"
else
  exec cmake -S . -B "$build" "$@"
fi
