#!/bin/sh
# Installs what building, testing and benchmarking sgc need on Debian 12.
# Run as root (CI does); as another user it prints the command instead.
set -e
PKGS="build-essential cmake ninja-build pkg-config libgc-dev w3m python3 python3-matplotlib \
libjemalloc-dev libgoogle-perftools-dev libmimalloc-dev valgrind ecl guile-3.0 gdb crystal"
if [ "$(id -u)" != 0 ]; then
  echo "not root: install the dependencies with: sudo apt-get install -y $PKGS" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends $PKGS
