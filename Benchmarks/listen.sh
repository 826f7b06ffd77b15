#!/usr/bin/env bash
# listen.sh: what OSCQuery WebSocket listeners cost live events, in ONE scripts/alsa-vm session
# (BENCHMARKS.md, "OSCQuery listeners"). aseqosc has an input `keys` routed to one UDP
# destination, an output `synth` played from its OSC input, and its OSCQuery server on
# 127.0.0.1:57201. Benchmarks/listen/in-vm.py reads the methods with a value from GET / (every
# /cc, /cc14, /program, /pitch_bend, /pressure, /poly_pressure, /rpn, /nrpn of the inputs and
# the output), then paces NOTES note-ons 10 ms apart, a controller change 5 ms after each so
# that listened values move, and times each note:
#   MIDI -> OSC: from a sequencer port of its own (libasound through ctypes) into `keys`, to a
#                python UDP receiver;
#   OSC -> MIDI: /midi/synth/{ch}/note_on to the OSC input, to a sequencer port of its own that
#                the output plays into;
# each with no WebSocket client and with 16 clients LISTENing to every one of those methods
# (python `websockets`, one process, normal priority), and MIDI -> OSC once more beside a mover
# (48 value changes every 10 ms into a second input) with no client and with 16 clients that
# never read, which the bridge closes once 256 KiB wait for each. The instruments run at
# SCHED_FIFO 70, above the bridge's event threads; the OSCQuery server's thread is a normal one.
#
#   Benchmarks/listen.sh [NOTES]         # default 500 note-ons a case (~5 minutes)
#   LISTEN_SMP=2 Benchmarks/listen.sh    # two vCPUs: the instruments off the bridge's CPU
#
# Needs python3 with `websockets` (pip), and alsa-utils (aconnect); builds aseqosc (release)
# unless E2E_NO_BUILD=1. Results in .build/bench-listen/ (results.json, vm.log, the receivers' logs).
set -euo pipefail
cd "$(dirname "$0")/.."
notes=${1:-500}
out=.build/bench-listen
mkdir -p "$out"
out=$(realpath "$out")
# The python that has websockets, resolved here: pyenv's python3 is a shim that costs seconds
# a start in the emulated VM, the interpreter itself does not.
python=""
for p in python3 /usr/bin/python3; do
  exe=$("$p" -c 'import sys, websockets; print(sys.executable)' 2>/dev/null) && { python=$exe; break; }
done
[ -n "$python" ] || { echo "listen.sh: no python3 with websockets (python3 -m pip install websockets)" >&2; exit 69; }
[ "${E2E_NO_BUILD:-0}" = 1 ] || swift build -c release -j "${JOBS:-2}" --product aseqosc
binary=$(swift build -c release --show-bin-path)/aseqosc
[ -x "$binary" ] || { echo "listen.sh: no $binary" >&2; exit 70; }
smp=${LISTEN_SMP:-1}   # 2: the bridge on vCPU 0, the instruments on vCPU 1
pin=(); [ "$smp" = 1 ] || pin=(taskset -c 1)
ALSA_VM_QUIET=1 ALSA_VM_SMP=$smp ALSA_VM_MEM=1024 ALSA_VM_TIMEOUT=${ALSA_VM_TIMEOUT:-1800} \
  scripts/alsa-vm -- ${pin[@]+"${pin[@]}"} chrt -f 70 "$python" Benchmarks/listen/in-vm.py "$binary" "$out" "$notes" > "$out/vm.log" 2>&1 ||
  { echo "listen.sh: the VM run failed:" >&2; tail -n 20 "$out/vm.log" >&2; exit 1; }
sed -n '/^RESULTS/,$p' "$out/vm.log"
