#!/usr/bin/env bash
# jitter.sh: two aseqosc bridges over a loopback that delays each packet by DELAY +- JITTER ms
# (netem), A (MIDI -> OSC) and B (OSC -> MIDI), with `latency: LATENCY` on A's destination and
# without, in one scripts/alsa-vm session (BENCHMARKS.md, "Jitter"). Benchmarks/network/in-vm.py
# plays a note every 50 ms into A and listens to B's output, one clock for both: how far B's
# intervals between notes stray from the intervals they were played at.
#
#   Benchmarks/jitter.sh [NOTES] [DELAY_MS] [JITTER_MS] [LATENCY_MS]   # default 400 5 4 10
#
# Needs python3-pyalsa and iproute2 (tc); builds aseqosc (release) unless E2E_NO_BUILD=1.
set -euo pipefail
cd "$(dirname "$0")/.."
notes=${1:-400} delay=${2:-5} spread=${3:-4} latency=${4:-10}
out=.build/bench-jitter
mkdir -p "$out"
[ "${E2E_NO_BUILD:-0}" = 1 ] || swift build -c release -j 2 --product aseqosc
binary=$(swift build -c release --show-bin-path)/aseqosc
ALSA_VM_MODULES="sch_netem" ALSA_VM_MEM=1024 scripts/alsa-vm -- \
  /usr/bin/python3 Benchmarks/network/in-vm.py jitter "$binary" "$out" "$notes" "$delay" "$spread" "$latency" |
  tee "$out/results.txt"
