# Shell helpers the scripts that run inside the benchmark VM share (POSIX sh; sourced by
# Benchmarks/e2e/in-vm.sh and Benchmarks/growth/in-vm.sh).

# wait_for_line FILE TEXT: waits (up to 120 s) until FILE has a line equal to TEXT.
wait_for_line() {
  i=0
  while ! grep -qx "$2" "$1" 2>/dev/null; do
    i=$((i + 1))
    [ $i -lt 1200 ] || { echo "timed out waiting for '$2' in $1" >&2; return 1; }
    sleep 0.1
  done
}

# stop_signal BRIDGE: the signal that stops BRIDGE cleanly (osmid's m2o and o2m stop on SIGINT).
stop_signal() { case $1 in m2o|o2m) echo INT ;; *) echo TERM ;; esac; }

# stop_bridges SIGNAL PID...: stops the bridges with SIGNAL (SIGKILL after 60 s) and waits.
stop_bridges() {
  stop_with=$1
  shift
  kill "-$stop_with" "$@" 2>/dev/null  # m2o may have gone: it exits when its input does
  ( sleep 60; kill -9 "$@" 2>/dev/null ) &
  watchdog_pid=$!
  wait "$@"
  kill $watchdog_pid 2>/dev/null
}
