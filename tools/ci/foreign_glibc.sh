#!/bin/sh
# Runs a program under another distribution's glibc, without installing it:
# the libc6 package is fetched with apt-get download (tools/ci/apt_fetch.sh,
# from the archive this machine's apt sources name, with the other
# release's suite), unpacked into a cache folder, and its own loader
# starts the program with its libraries first on the search path (the
# program's RUNPATH still finds libsgc).  Another distribution's package
# (ubuntu-2.39 on Debian) cannot come from this machine's archive: give
# its .deb in SGC_GLIBC_DEB (e.g. `apt-get download libc6` on that
# distribution).
#
#   tools/ci/foreign_glibc.sh [-c CACHE] NAME PROGRAM [ARGS...]
#
# NAME is one of the glibcs below (the machines sgc has been measured on);
# CACHE defaults to /tmp/sgc-glibc.  Why: a conservative collector keeps
# whatever a stale stack word points to, and which words go stale depends
# on how glibc's functions lay out their frames.  bench/unfair.c's drop
# mode kept every waiting thread's last list on the lent 16-CPU machine
# (Ubuntu 24.04) and none here (Debian 12); `tools/ci/foreign_glibc.sh
# ubuntu-2.39 BUILD/bench/bench-unfair-sgc -t 16 -m drop` reproduces that
# machine's behaviour on this one (docs/benchmarks/history.md, "unfair's
# stack scrub").
set -eu
cache=/tmp/sgc-glibc
if [ "${1:-}" = -c ]; then cache=$2; shift 2; fi
name=${1:?usage: tools/ci/foreign_glibc.sh [-c CACHE] NAME PROGRAM [ARGS...]}
shift
[ $# -ge 1 ] || { echo "usage: tools/ci/foreign_glibc.sh [-c CACHE] NAME PROGRAM [ARGS...]" >&2; exit 2; }

case $name in
ubuntu-2.39) distro=ubuntu suite=noble ;;
debian-2.41) distro=debian suite=trixie ;;
*) echo "foreign_glibc: unknown glibc '$name' (ubuntu-2.39, debian-2.41)" >&2; exit 2 ;;
esac

root=$cache/$name
lib=$root/usr/lib/x86_64-linux-gnu
if [ ! -x "$lib/ld-linux-x86-64.so.2" ]; then
  mkdir -p "$cache/$name-deb"
  deb=${SGC_GLIBC_DEB:-}
  if [ -z "$deb" ]; then
    id=$(. /etc/os-release 2>/dev/null && echo "${ID:-}")
    [ "$id" = "$distro" ] ||
      { echo "foreign_glibc: $name's libc6 is not in this machine's ($id) archive: set SGC_GLIBC_DEB to its .deb" >&2; exit 1; }
    rm -f "$cache/$name-deb"/libc6_*.deb
    "$(dirname "$0")/apt_fetch.sh" binary "$suite" libc6 "$cache/$name-deb" ||
      { echo "foreign_glibc: cannot fetch $suite's libc6 with apt-get" >&2; exit 1; }
    deb=$(ls "$cache/$name-deb"/libc6_*.deb)
  fi
  rm -rf "$root" && mkdir -p "$root"
  dpkg-deb -x "$deb" "$root"
fi
exec "$lib/ld-linux-x86-64.so.2" --library-path "$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"
