#!/bin/sh
# Runs a program under another distribution's glibc, without installing it:
# the libc6 package is fetched from a package registry, unpacked into a
# cache folder, and its own loader starts the program with its libraries
# first on the search path (the program's RUNPATH still finds libsgc).
#
#   tools/foreign_glibc.sh [-c CACHE] NAME PROGRAM [ARGS...]
#
# NAME is one of the glibcs below (the machines sgc has been measured on);
# CACHE defaults to /tmp/sgc-glibc.  Why: a conservative collector keeps
# whatever a stale stack word points to, and which words go stale depends
# on how glibc's functions lay out their frames.  bench/unfair.c's drop
# mode kept every waiting thread's last list on the lent 16-CPU machine
# (Ubuntu 24.04) and none here (Debian 12); `tools/foreign_glibc.sh
# ubuntu-2.39 BUILD/bench/bench-unfair-sgc -t 16 -m drop` reproduces that
# machine's behaviour on this one (docs/benchmarks/history.md, "unfair's
# stack scrub").
set -eu
cache=/tmp/sgc-glibc
if [ "${1:-}" = -c ]; then cache=$2; shift 2; fi
name=${1:?usage: tools/foreign_glibc.sh [-c CACHE] NAME PROGRAM [ARGS...]}
shift
[ $# -ge 1 ] || { echo "usage: tools/foreign_glibc.sh [-c CACHE] NAME PROGRAM [ARGS...]" >&2; exit 2; }

case $name in
ubuntu-2.39) url=http://archive.ubuntu.com/ubuntu/pool/main/g/glibc/libc6_2.39-0ubuntu8.12_amd64.deb ;;
debian-2.41) url=http://deb.debian.org/debian/pool/main/g/glibc/libc6_2.41-12+deb13u4_amd64.deb ;;
*) echo "foreign_glibc: unknown glibc '$name' (ubuntu-2.39, debian-2.41)" >&2; exit 2 ;;
esac

root=$cache/$name
lib=$root/usr/lib/x86_64-linux-gnu
if [ ! -x "$lib/ld-linux-x86-64.so.2" ]; then
  mkdir -p "$cache"
  deb=$cache/${url##*/}
  # A registry that has moved the package on answers 404: say which.
  curl -sSf -o "$deb.part" "$url" ||
    { rm -f "$deb.part"; echo "foreign_glibc: cannot fetch $url (a newer revision may have replaced it)" >&2; exit 1; }
  mv "$deb.part" "$deb"
  rm -rf "$root" && mkdir -p "$root"
  dpkg-deb -x "$deb" "$root"
fi
exec "$lib/ld-linux-x86-64.so.2" --library-path "$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"
