#!/bin/sh
# Installs what building, testing and benchmarking sgc need on Debian 12.
# Run as root (CI does); as another user it prints the command instead.
# The OPTIONAL packages are bdwgc clients that tests run with sgc
# preloaded (bb_crystal_preload, bb_nix_preload, bb_poke_preload,
# bb_goo_preload, bb_neko_preload); a test whose client is missing skips,
# so failing to install them stops nothing.
set -e
PKGS="build-essential cmake ninja-build pkg-config libgc-dev w3m python3 python3-matplotlib \
libjemalloc-dev libgoogle-perftools-dev libmimalloc-dev valgrind ecl guile-3.0 gdb"
OPTIONAL="crystal nix-bin poke goo neko"
if [ "$(id -u)" != 0 ]; then
  echo "not root: install the dependencies with: sudo apt-get install -y $PKGS $OPTIONAL" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends $PKGS
for p in $OPTIONAL; do
  apt-get install -y -q --no-install-recommends "$p" ||
    echo "install-deps: $p not installed; the tests that need it will skip" >&2
done
