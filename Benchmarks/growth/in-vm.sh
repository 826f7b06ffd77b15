#!/bin/sh
# growth/in-vm.sh: the part of Benchmarks/growth.sh that runs inside ONE scripts/alsa-vm
# session: aseqosc and m2o under callgrind, MIDI -> OSC, as the destinations (1, 4, 16, 64) and
# the SysEx size (16, 128, 512 bytes) grow. Not meant to be run by hand (growth.sh builds
# loadgen and writes the aseqosc configs first):
#
#   in-vm.sh OUT SMALL LARGE
#
# Each bridge runs twice per case, forwarding SMALL and LARGE events; the difference in
# instructions over LARGE - SMALL is the cost per event, start-up and shut-down cancelled.
# Appends "GROWTH bridge=.. dimension=.. n=.. events=.. ir=.." lines to OUT/results.txt.
set -u
out=$1 small=$2 large=$3
aseqosc=.build/release/aseqosc
results=$out/results.txt
port=57120

# wait_for_line, stop_signal, stop_bridges.
. "$(dirname "$0")/../lib/vm-helpers.sh"

# measure BRIDGE DIMENSION N LOADGEN_ARGS -- BRIDGE_COMMAND...: both callgrind runs of one case.
measure() {
  bridge=$1 dimension=$2 n=$3
  shift 3
  loadgen_args=""
  while [ "$1" != "--" ]; do loadgen_args="$loadgen_args $1"; shift; done
  shift
  for events in $small $large; do
    label=$bridge.$dimension.$n.$events
    # shellcheck disable=SC2086  # loadgen_args is a list of words without spaces
    "$out/loadgen" --label "$label" --direction m2o --udp-port $port --window 16 --count "$events" \
      --idle-ms 30000 --settle-ms 3000 $loadgen_args > "$out/loadgen.$label.log" 2>&1 &
    generator=$!
    wait_for_line "$out/loadgen.$label.log" ready || { kill $generator; continue; }
    valgrind --tool=callgrind --fair-sched=yes --callgrind-out-file="$out/callgrind.$label.out" "$@" \
      > "$out/bridge.$label.log" 2>&1 &
    bridge_pid=$!
    wait $generator
    # m2o stops on SIGINT (and prints "Segmentation fault" doing so, after its last event).
    stop_bridges "$(stop_signal "$bridge")" $bridge_pid
    received=$(sed -n 's/.* received=\([0-9]*\).*/\1/p' "$out/loadgen.$label.log")
    ir=$(grep -E '^(summary|totals):' "$out/callgrind.$label.out" 2>/dev/null | head -n 1 | awk '{print $2}')
    echo "GROWTH bridge=$bridge dimension=$dimension n=$n events=$events received=${received:-0} ir=${ir:-failed}" >> "$results"
    echo "$label: received ${received:-0}, ir ${ir:-failed}" >&2
  done
}

for d in 1 4 16 64; do
  ports="-o $port"
  k=0
  while [ $k -lt $((d - 1)) ]; do ports="$ports -o $((port + 100 + k))"; k=$((k + 1)); done
  measure aseqosc destinations $d --sinks $((d - 1)) -- \
    "$aseqosc" run --config "$out/destinations-$d.json5" --log-level warning
  # shellcheck disable=SC2086  # ports is a list of words without spaces
  measure m2o destinations $d --sinks $((d - 1)) -- m2o -m 3 -i loadgen $ports
done
for s in 16 128 512; do
  measure aseqosc sysex $s --sysex $s -- "$aseqosc" run --config "$out/destinations-1.json5" --log-level warning
  # -r: the SysEx as one blob, as aseqosc sends it (without it m2o sends an int per byte, and
  # its 1,024-byte packet buffer overflows from ~190 bytes).
  measure m2o sysex $s --sysex $s -- m2o -m 3 -r -i loadgen -o $port
done
echo done >&2
