# Sourced by run-against-bdwgc.sh and preload_common.sh.
#
# wait_for PID LIMIT [HOOK]: waits for PID, at most LIMIT seconds; past
# that it calls HOOK PID (if given: a diagnosis while the process still
# exists), kills PID and returns 124.  Otherwise returns PID's status.
wait_for() {
  wf_pid=$1 wf_limit=$2 wf_hook=${3:-} wf_t=0
  while kill -0 "$wf_pid" 2>/dev/null; do
    if [ "$wf_t" -ge "$((wf_limit * 10))" ]; then
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
