#!/bin/sh
# in-vm.sh OUT ROUNDS RATE COUNT DIRECTIONS PLACEMENTS COMMANDS: the part of Benchmarks/page.sh
# that runs in the VM. Each round, direction and placement, two paired paced runs of the same
# aseqosc twice over (loadgen --pair, RATE events/s to each, COUNT each): one instance with a
# page watching (watch.py, asking for COMMANDS), the other with nobody connected; the watched one
# is stream a in the first pair and stream b in the second. Labels
# WATCHED|CLOSED.DIRECTION-PLACEMENT.ROUND.PAIR; the page's counts are PAGE lines in results.txt.
set -u
out=$1 rounds=$2 rate=$3 count=$4 directions=$5 placements=$6 commands=$7
. "$(dirname "$0")/../lib/vm-helpers.sh"
results=$out/results.txt
# pip's python (often pyenv's, which the VM shares with the host) has websockets; Debian's may not.
# The interpreter itself, not pyenv's shim, which takes seconds to start under emulation.
python=$(for p in python3 /usr/local/bin/python3 /root/.pyenv/versions/*/bin/python3; do
  "$p" -c 'import sys, websockets.sync.client; print(sys.executable)' 2>/dev/null && break; done)
[ -n "$python" ] || { echo "in-vm.sh: no python3 with websockets (python3 -m pip install websockets)" >&2; exit 69; }
uname -r > "$out/vm-kernel.txt"
# The VM's defaults drop datagrams of a burst in the loopback before anyone reads them
# (Benchmarks/replay/in-vm.py): a larger backlog and receive buffers (loadgen asks for 4 MiB).
echo 1048576 > /proc/sys/net/core/netdev_max_backlog
echo 16777216 > /proc/sys/net/core/rmem_max
echo 16777216 > /proc/sys/net/core/rmem_default

# drops: datagrams the kernel dropped so far, backlog (softnet_stat) and UDP receive buffers.
drops() {
  backlog=0
  while read -r _ dropped _; do backlog=$((backlog + 0x$dropped)); done < /proc/net/softnet_stat
  rcvbuf=$(awk '/^Udp:/ { if (!h) { for (i = 1; i <= NF; i++) c[$i] = i; h = 1 } else print $c["RcvbufErrors"] }' /proc/net/snmp)
  echo "$backlog $rcvbuf"
}

# Two vCPUs: both bridges' event threads on CPU 0; the generator (SCHED_FIFO 70, above the
# bridges, so that it is never the one starved) and the page's client on CPU 1. What the bridges'
# CPU carries of a page is the ring copies, and with placement "shared" its server's side too:
# the drains, the frames, the WebSocket.

# bridge CONFIG LOG CONTROL: one aseqosc in the background (bridge_pid), its event threads
# (aseqosc-input, aseqosc-osc-in) on CPU 0 and the rest of it as $placement says: "shared" on
# CPU 0 too, as on a machine with one CPU; "apart" on CPU 1, as the daemon or the scheduler
# would put a normal-priority thread on a machine with CPUs to spare; "free" wherever the
# scheduler puts it.
bridge() {
  case $placement in shared) cpus=0 ;; apart) cpus=1 ;; free) cpus=0,1 ;; esac
  taskset -c $cpus "$out/aseqosc" run --config "$1" --log-level warning --control "$3" > "$2" 2>&1 &
  bridge_pid=$!
  [ $cpus = 0 ] || keep_threads $bridge_pid 0 aseqosc-input aseqosc-osc-in
}

# keep_threads PID CPU NAME...: puts PID's threads named NAME on CPU, waiting for them to start.
keep_threads() {
  pid=$1 cpu=$2
  shift 2
  for name in "$@"; do
    i=0
    until tid=$(grep -lx "$name" /proc/"$pid"/task/*/comm 2>/dev/null | head -n 1 | cut -d/ -f5) && [ -n "$tid" ]; do
      i=$((i + 1)); [ $i -lt 600 ] || { echo "in-vm.sh: no thread $name in $pid" >&2; return 1; }
      sleep 0.05
    done
    taskset -pc "$cpu" "$tid" > /dev/null
  done
}

# pair DIRECTION LABEL_A LABEL_B WATCHED(a|b): one paired paced run; the page watches stream
# WATCHED's bridge from before the first event to after the last.
pair() {
  direction=$1 label_a=$2 label_b=$3 watched=$4
  if [ "$direction" = m2o ]; then config=forward port=57120 format="" query=57130
  else config=reverse port=57200 format="--format osmid" query=57210; fi
  [ "$watched" = b ] && query=$((query + 1))
  # The settle time covers the bridges' start-up and the page's connecting (python under
  # emulation takes a second or two to import websockets).
  # shellcheck disable=SC2086  # format is empty or two words
  taskset -c 1 chrt -f 70 "$out/loadgen" --label "$label_a" --pair "$label_b" --direction "$direction" $format --udp-port $port \
    --rate "$rate" --count "$count" --warmup-ms 100 --settle-ms 6000 > "$out/loadgen.$label_a.log" 2>&1 &
  generator=$!
  drops_before=$(drops)
  wait_for_line "$out/loadgen.$label_a.log" ready || { kill $generator; return 1; }
  bridge "$out/$config-a.json5" "$out/bridge.$label_a.log" /run/aseqosc-page-a
  pid_a=$bridge_pid
  bridge "$out/$config-b.json5" "$out/bridge.$label_b.log" /run/aseqosc-page-b
  pid_b=$bridge_pid
  # shellcheck disable=SC2086  # the page's commands, words
  taskset -c 1 "$python" "$(dirname "$0")/watch.py" $query $commands > "$out/page.$label_a.log" 2>&1 &
  watcher=$!
  wait_for_line "$out/page.$label_a.log" watching || echo "in-vm.sh: the page never watched ($label_a)" >&2
  # The events must all have been sent while the page watched: it is stopped after the
  # generator, which returns when every event is back (or given up on).
  if grep -q '^RESULT' "$out/loadgen.$label_a.log"; then
    echo "in-vm.sh: the generator finished before the page watched ($label_a)" >&2
  fi
  wait $generator
  drops_after=$(drops)
  echo "DROPS label=$label_a backlog=$(( ${drops_after% *} - ${drops_before% *} )) rcvbuf=$(( ${drops_after#* } - ${drops_before#* } ))" >> "$results"
  sleep 0.2  # the server's last 50 ms tick
  # Each bridge's own account (input overruns, drops), kept beside its log.
  "$out/aseqosc" status --control /run/aseqosc-page-a > "$out/status.$label_a.txt" 2>&1
  "$out/aseqosc" status --control /run/aseqosc-page-b > "$out/status.$label_b.txt" 2>&1
  kill -TERM $watcher
  wait $watcher
  stop_bridges TERM $pid_a $pid_b
  if grep -q '^RESULT' "$out/loadgen.$label_a.log"; then
    grep '^RESULT' "$out/loadgen.$label_a.log" >> "$results"
  else
    echo "RESULT label=$label_a failed" >> "$results"
    tail -n 5 "$out/loadgen.$label_a.log" "$out/bridge.$label_a.log" "$out/bridge.$label_b.log" >&2
  fi
  watched_label=$([ "$watched" = a ] && echo "$label_a" || echo "$label_b")
  page=$(grep '^PAGE' "$out/page.$label_a.log" || echo "PAGE failed")
  echo "${page%% *} label=$watched_label tapped=$((2 * count)) ${page#* }" >> "$results"
  grep '^RESULT' "$out/loadgen.$label_a.log" | sed 's/^RESULT label=//' | cut -c1-120 >&2
  echo "  page: ${page#PAGE }" >&2
}

round=1
while [ "$round" -le "$rounds" ]; do
  for direction in $directions; do
    for placement in $placements; do
      case=$direction-$placement
      echo "== $direction, the page's server $placement, $rate events/s to each, round $round of $rounds" >&2
      pair $direction "watched.$case.$round.1" "closed.$case.$round.1" a
      pair $direction "closed.$case.$round.2" "watched.$case.$round.2" b
    done
  done
  round=$((round + 1))
done
