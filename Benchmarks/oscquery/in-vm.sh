#!/bin/sh
# in-vm.sh OUT ROUNDS: the part of Benchmarks/oscquery.sh that runs in the VM. Each round: aseqosc
# and o2m, each paced quiet and paced under the HTTP flood (flood.py against aseqosc's port 57201).
set -u
out=$1 rounds=$2
. "$(dirname "$0")/../lib/vm-helpers.sh"
python=$(command -v python3)

# measure LABEL BRIDGE FLOOD: one paced run of BRIDGE (aseqosc or o2m), FLOOD 1 or 0.
measure() {
  label=$1 bridge=$2 flood=$3
  bridge_pid="" flood_pid="" server_pid=""
  if [ "$bridge" = aseqosc ]; then
    "$out/aseqosc" run --config "$out/aseqosc.json5" --log-level warning --control "/run/aseqosc-q.$$" \
      > "$out/bridge.$label.log" 2>&1 &
    bridge_pid=$!
  elif [ "$flood" = 1 ]; then
    # o2m serves no OSCQuery: a second aseqosc (its OSC input on another port) takes the same
    # flood, so the machine carries the same load while o2m is measured.
    sed 's/57200/57300/' "$out/aseqosc.json5" > "$out/aseqosc-server.json5"
    "$out/aseqosc" run --config "$out/aseqosc-server.json5" --log-level warning --control "/run/aseqosc-s.$$" \
      > "$out/server.$label.log" 2>&1 &
    server_pid=$!
  fi
  if [ "$flood" = 1 ]; then
    i=0
    until curl -s --max-time 1 -o /dev/null http://127.0.0.1:57201/?HOST_INFO; do
      i=$((i + 1)); [ $i -lt 300 ] || break; sleep 0.1
    done
    # On the second vCPU, as a client on another machine would be: what the machine running the
    # bridge carries is its server's side of the flood.
    taskset -c 1 "$python" "$(dirname "$0")/flood.py" 127.0.0.1 57201 > "$out/flood.$label.log" 2>&1 &
    flood_pid=$!
    wait_for_line "$out/flood.$label.log" flooding || { echo "RESULT label=$label failed (no flood)" >> "$out/results.txt"; kill $flood_pid $bridge_pid $server_pid 2>/dev/null; return; }
  fi
  # The instrument runs above everything measured, so that what it reports is the bridge's delay.
  chrt -f 70 "$out/loadgen" --label "$label" --direction o2m --format osmid --udp-port 57200 --rate 1000 --count 5000 \
    --warmup-ms 500 > "$out/loadgen.$label.log" 2>&1 &
  generator=$!
  wait_for_line "$out/loadgen.$label.log" ready || { kill $generator; return 1; }
  if [ "$bridge" = o2m ]; then
    o2m -m 3 -i 57200 -o loadgen > "$out/bridge.$label.log" 2>&1 &
    bridge_pid=$!
  fi
  wait $generator
  [ -n "$flood_pid" ] && { kill $flood_pid; wait $flood_pid 2>/dev/null; echo "flood $label: $(tail -n 1 "$out/flood.$label.log")"; }
  stop_bridges "$(stop_signal $bridge)" $bridge_pid
  [ -n "$server_pid" ] && stop_bridges TERM $server_pid
  if grep -q '^RESULT' "$out/loadgen.$label.log"; then
    grep '^RESULT' "$out/loadgen.$label.log" >> "$out/results.txt"
    echo "run $(grep '^RESULT' "$out/loadgen.$label.log" | sed 's/^RESULT label=//' | cut -c1-150)"
  else
    echo "RESULT label=$label failed" >> "$out/results.txt"
    tail -n 5 "$out/loadgen.$label.log" "$out/bridge.$label.log" >&2
  fi
}

round=1
while [ $round -le "$rounds" ]; do
  measure "aseqosc.quiet.$round" aseqosc 0
  measure "aseqosc.flood.$round" aseqosc 1
  measure "o2m.quiet.$round" o2m 0
  measure "o2m.flood.$round" o2m 1
  round=$((round + 1))
done
