#!/bin/sh
# Fetches a Debian package's files through apt, without a registry's
# address written anywhere in this repository: the archive is the one
# this machine's own apt sources name.
#
#   tools/ci/apt_fetch.sh source PKG[=VERSION] DIR [SUITE]  # source files into DIR
#   tools/ci/apt_fetch.sh binary SUITE PKG DIR              # PKG's .deb from SUITE into DIR
#
# Both run apt-get on a private state folder (SGC_APT_STATE, default
# /tmp/sgc-apt, reused between runs), whose only source is derived from
# the system's: the stanza of /etc/apt/sources.list.d/*.sources (or the
# line of /etc/apt/sources.list) that names this release's suite, with
# `Types: deb-src` for sources, or the suite replaced by SUITE for a
# binary of another release (e.g. trixie's libc6 on bookworm; a source
# of another release likewise when SUITE is given). Files fetched before
# a failure are left in DIR (an archive may keep an upstream tarball
# after it dropped the Debian files that go with it). The
# system's apt configuration and package lists are left alone, so this
# works without root. Exit status 77 when the machine has no usable
# Debian source or the archive cannot be reached (callers skip then).
set -eu
usage() { echo "usage: tools/ci/apt_fetch.sh source PKG[=VER] DIR [SUITE] | binary SUITE PKG DIR" >&2; exit 2; }
[ $# -ge 1 ] || usage
what=$1; shift
case $what in
source) [ $# -eq 2 ] || [ $# -eq 3 ] || usage; pkg=$1 dir=$2 suite=${3:-} types=deb-src ;;
binary) [ $# -eq 3 ] || usage; suite=$1 pkg=$2 dir=$3 types=deb ;;
*) usage ;;
esac
command -v apt-get >/dev/null 2>&1 || { echo "apt_fetch: no apt-get here" >&2; exit 77; }

codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || { echo "apt_fetch: no VERSION_CODENAME in /etc/os-release" >&2; exit 77; }
want=${suite:-$codename}
state=${SGC_APT_STATE:-/tmp/sgc-apt}/$types-$want
mkdir -p "$state/lists/partial" "$state/cache/archives/partial" "$state/sources" "$state/prefs" "$dir"

# The system's stanza for its own release (not -updates or -security),
# rewritten: Types and Suites replaced, the rest (URIs, Components,
# Signed-By) kept.
list=$state/sources/sgc.sources
found=
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  awk -v rel="$codename" -v types="$types" -v suite="$want" '
    function flush() {
      if (ok && uris != "") {
        print "Types: " types; print "URIs: " uris; print "Suites: " suite
        print "Components: " (comps != "" ? comps : "main")
        if (signed != "") print "Signed-By: " signed
        print ""
      }
      ok = 0; uris = comps = signed = ""
    }
    /^[ \t]*$/ { flush(); next }
    /^#/ { next }
    tolower($1) == "uris:" { uris = $2 }
    tolower($1) == "components:" { $1 = ""; sub(/^ /, ""); comps = $0 }
    tolower($1) == "signed-by:" { signed = $2 }
    tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == rel) ok = 1 }
    END { flush() }' "$f"
done >"$list"
[ -s "$list" ] && found=1
if [ -z "$found" ] && [ -f /etc/apt/sources.list ]; then
  # One-line format: "deb [options] URI SUITE COMPONENTS...".
  awk -v rel="$codename" -v types="$types" -v suite="$want" '
    $1 == "deb" {
      i = 2; opts = ""
      if ($i ~ /^\[/) { while ($i !~ /\]$/) { opts = opts " " $i; i++ } opts = opts " " $i; i++ }
      if ($(i + 1) != rel) next
      line = types opts " " $i " " suite
      for (j = i + 2; j <= NF; j++) line = line " " $j
      print line
    }' /etc/apt/sources.list >"$state/sources/sgc.list"
  rm -f "$list"
  [ -s "$state/sources/sgc.list" ] && found=1
fi
[ -n "$found" ] || { echo "apt_fetch: no apt source for $codename on this machine" >&2; exit 77; }

apt() {
  apt-get -q -o Dir::State="$state" -o Dir::State::Lists="$state/lists" \
    -o Dir::Cache="$state/cache" -o Dir::Etc::SourceList=/dev/null \
    -o Dir::Etc::SourceParts="$state/sources" -o Dir::Etc::PreferencesParts="$state/prefs" \
    -o APT::Sandbox::User="$(id -un)" -o Debug::NoLocking=1 "$@"
}
# Refresh the lists at most once a day.
stamp=$state/updated
if [ -z "$(find "$stamp" -mtime -1 2>/dev/null)" ]; then
  apt update >"$state/update.log" 2>&1 ||
    { echo "apt_fetch: apt-get update failed (see $state/update.log)" >&2; exit 77; }
  touch "$stamp"
fi
cd "$dir"
if [ "$what" = source ]; then
  apt source --download-only "$pkg" >"$state/fetch.log" 2>&1
else
  apt download "$pkg" >"$state/fetch.log" 2>&1
fi || { echo "apt_fetch: apt-get could not fetch $pkg (see $state/fetch.log)" >&2; tail -3 "$state/fetch.log" >&2; exit 77; }
