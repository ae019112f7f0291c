# Sourced by the shell tests.  The caller sets TAG (the test's name); this
# sets up TMP (removed on exit) and fail().
TMP=$(mktemp -d "${TMPDIR:-/tmp}/$TAG.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
fail() { echo "FAIL [$TAG] $*"; exit 1; }
