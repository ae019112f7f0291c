# Sourced by run-against-bdwgc.sh and preload_common.sh.  TESTS_LIB is
# this folder (a caller in tests/KIND/ need not set it).
#
# wait_for PID LIMIT [HOOK]: waits for PID, at most LIMIT seconds times
# the machine's speed factor (tools/ci/speed_factor.sh, measured when this
# file is sourced: a slow or busy machine gets longer); past that it
# calls HOOK PID (if given: a diagnosis while the process still exists),
# kills PID and returns 124.  Otherwise returns PID's status.
: "${TESTS_LIB:=$(dirname "$0")/../lib}"
[ -f "$TESTS_LIB/../../tools/ci/speed_factor.sh" ] ||
  echo "wait_for.sh: no tools/ci/speed_factor.sh above $TESTS_LIB: factor 1" >&2
wf_factor=$(sh "$TESTS_LIB/../../tools/ci/speed_factor.sh" 2>/dev/null || echo 1.0)
wf_tenths=$(echo "$wf_factor" | awk '{ t = int($1 * 10 + 0.5); print t < 10 ? 10 : t }')
wait_for() {
  wf_pid=$1 wf_limit=$2 wf_hook=${3:-} wf_t=0
  while kill -0 "$wf_pid" 2>/dev/null; do
    # wf_t counts tenths of a second; the limit in tenths, scaled.
    if [ "$wf_t" -ge "$((wf_limit * wf_tenths))" ]; then
      [ -n "$wf_hook" ] && "$wf_hook" "$wf_pid"
      kill -9 "$wf_pid" 2>/dev/null
      wait "$wf_pid" 2>/dev/null
      return 124
    fi
    sleep 0.1
    wf_t=$((wf_t + 1))
  done
  wait "$wf_pid"
}
