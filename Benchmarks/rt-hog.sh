#!/usr/bin/env bash
# rt-hog.sh: paced MIDI -> OSC latency on a VM with TWO CPUs, unloaded and with a real-time hog
# on the last CPU (SCHED_FIFO 50, busy 3 ms then asleep 2 ms, as an audio thread at a high load),
# for aseqosc as it starts by default (`realtime.cpu: "auto"`: with a destination on this
# machine its input thread is kept on the last CPU, the hog's), aseqosc with
# `realtime.cpu: false` (it may move), m2o and the bare forwarder. What the pinning costs when
# a higher-priority task shares the CPU it pins to (docs/CONFIG.md, `realtime.cpu`).
#
#   Benchmarks/rt-hog.sh [--rounds N]      (default 3, about a minute each)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3
if [ "${1:-}" = --rounds ]; then rounds=$2; shift 2; fi
hog='exec chrt -f 50 taskset -c 1 /usr/bin/python3 -c "
import time
while True:
    end = time.perf_counter() + 0.003
    while time.perf_counter() < end:
        pass
    time.sleep(0.002)
"'
LOAD_BRIDGES="aseqosc aseqosc_unpinned m2o bare" LOAD_HOG="$hog" ALSA_VM_SMP=2 \
  exec Benchmarks/e2e.sh --load-only --no-callgrind --rounds "$rounds" --out .build/bench-rt-hog "$@"
