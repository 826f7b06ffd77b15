#!/usr/bin/env bash
# replay.sh: how long a replay of ~11,000 last values (`sync: ["request"]`, /aseqosc/sync) takes,
# and what it does to live latency, in ONE scripts/alsa-vm session (BENCHMARKS.md, "Replay").
# aseqosc reads "Virtual Raw MIDI 0-0".."0-2" into route "faders" with one UDP destination;
# Benchmarks/replay/in-vm.py fills its store through the raw devices (every kept controller and
# poly pressure on every note, 16 channels, 3 ports), asks for one replay and times it at a
# python receiver, then plays NOTES note-ons 10 ms apart from a sequencer port into the bridge's
# input (libasound through ctypes) and measures each one's latency to the receiver, once quiet
# and once while a replay is requested every 1.1 s. The instruments run at SCHED_FIFO 70, above
# the bridge (priority 4): on one vCPU, a receiver below it would time its own starvation.
#
#   Benchmarks/replay.sh [NOTES]         # default 500 note-ons per latency run (~2 minutes)
#   REPLAY_SMP=2 Benchmarks/replay.sh    # two vCPUs: the instruments off the bridge's CPU
#
# Needs python3 and alsa-utils (aconnect) only; builds aseqosc (release) unless E2E_NO_BUILD=1. Results in
# .build/bench-replay/ (results.json, vm.log, each receiver's messages).
set -euo pipefail
cd "$(dirname "$0")/.."
notes=${1:-500}
out=.build/bench-replay
mkdir -p "$out"
out=$(realpath "$out")
[ "${E2E_NO_BUILD:-0}" = 1 ] || swift build -c release -j "${JOBS:-2}" --product aseqosc
binary=$(swift build -c release --show-bin-path)/aseqosc
[ -x "$binary" ] || { echo "replay.sh: no $binary" >&2; exit 70; }
smp=${REPLAY_SMP:-1}   # 2: the bridge on vCPU 0, the instruments on vCPU 1
pin=(); [ "$smp" = 1 ] || pin=(taskset -c 1)
ALSA_VM_QUIET=1 ALSA_VM_SMP=$smp ALSA_VM_MEM=1024 ALSA_VM_TIMEOUT=${ALSA_VM_TIMEOUT:-1200} \
  scripts/alsa-vm -- ${pin[@]+"${pin[@]}"} chrt -f 70 /usr/bin/python3 Benchmarks/replay/in-vm.py "$binary" "$out" "$notes" > "$out/vm.log" 2>&1 ||
  { echo "replay.sh: the VM run failed:" >&2; tail -n 20 "$out/vm.log" >&2; exit 1; }
sed -n '/^RESULTS/,$p' "$out/vm.log"
