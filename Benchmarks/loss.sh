#!/usr/bin/env bash
# loss.sh: two aseqosc bridges over a loopback that loses packets (netem), A (MIDI -> OSC) and
# B (OSC -> MIDI), with and without `recovery: true` on A's destination, in one scripts/alsa-vm
# session (BENCHMARKS.md, "Loss"). Benchmarks/network/in-vm.py plays the notes into A and listens
# to B's output through ALSA ports of its own (python3-pyalsa), one clock for both: notes left
# stuck, how long each lost note-off took to be repaired, and how long B takes to release five
# notes held when A is killed.
#
#   Benchmarks/loss.sh [NOTES] [LOSS%]        # default 1000 notes, 10% loss (~2 minutes)
#
# Needs python3-pyalsa and iproute2 (tc); builds aseqosc (release) unless E2E_NO_BUILD=1.
set -euo pipefail
cd "$(dirname "$0")/.."
notes=${1:-1000}
loss=${2:-10}
out=.build/bench-loss
mkdir -p "$out"
[ "${E2E_NO_BUILD:-0}" = 1 ] || swift build -c release -j 2 --product aseqosc
binary=$(swift build -c release --show-bin-path)/aseqosc
ALSA_VM_MODULES="sch_netem" ALSA_VM_MEM=1024 scripts/alsa-vm -- \
  /usr/bin/python3 Benchmarks/network/in-vm.py loss "$binary" "$out" "$notes" "$loss" | tee "$out/results.txt"
