#!/usr/bin/env bash
# load.sh: paced MIDI -> OSC latency with and without a CPU hog (a busy loop at normal priority
# on the VM's one CPU), for aseqosc with real-time threads, aseqosc with `realtime: false`, m2o
# and the bare forwarder, all in one scripts/alsa-vm session (Benchmarks/e2e.sh --load-only,
# whose harness it is; BENCHMARKS.md, "Load").
#
#   Benchmarks/load.sh [--rounds N] [e2e.sh options]     # default 3 rounds, about 1 minute each
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3
if [ "${1:-}" = --rounds ]; then rounds=$2; shift 2; fi
exec Benchmarks/e2e.sh --load-only --no-callgrind --rounds "$rounds" --out .build/bench-load "$@"
