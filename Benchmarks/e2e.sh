#!/usr/bin/env bash
# e2e.sh: end-to-end benchmarks of aseqosc against osmid (m2o, o2m) and a bare C forwarder, all
# in ONE scripts/alsa-vm session, or directly on this machine's sequencer with --here (see
# BENCHMARKS.md for what is measured and how to read it).
#
#   Benchmarks/e2e.sh [--reverse] [--no-callgrind] [--quick] [--rounds N] [--paired] [--callgrind-only BRIDGE.DIRECTION]
#                     [--trace-only] [--bundles-only] [--against BINARY] [--load-only] [--here] [--out DIR]
#
#   --reverse       also OSC -> MIDI (aseqosc, o2m and the bare forwarder)
#   --no-callgrind  skip the instruction counts (the slow part: every bridge runs twice under
#                   valgrind)
#   --quick         a few hundred events per run: a smoke test of the harness, not a measurement
#   --rounds N      the paced and windowed runs N times over (default 1), the bridges taking turns
#                   in each round; the tables give the median over rounds of each same-round
#                   ratio (about 1 minute per round and direction)
#   --paired        also, in each round, paced runs of aseqosc and the bare forwarder AT ONCE, the
#                   generator's events going to one and the other in turn (loadgen --pair; each
#                   bridge 500 events/s). Separate runs meet the emulated VM in different moods
#                   (one run's p50 can be twice the next one's for the same program); paired,
#                   both bridges meet the same ones, which is what a latency ratio needs
#   --callgrind-only BRIDGE.DIRECTION
#                   only the two callgrind runs of one bridge in one direction, e.g. aseqosc.o2m
#                   (OSC -> MIDI) or aseqosc.m2o: about 3-4 minutes, for iterating on a hot path
#   --trace-only    only paired paced runs of aseqosc and the bare forwarder (twice per direction,
#                   each bridge once as stream a) with the kernel's tracer recording system calls,
#                   wake-ups and context switches; prints where each message's time goes, step by
#                   step, user mode apart from kernel (Benchmarks/e2e/trace-segments.py): about
#                   1 minute
#   --bundles-only  only OSC -> MIDI with chords: each datagram a bundle of 4 messages, paced and
#                   windowed, aseqosc and o2m (--rounds times); prints each run's result and the
#                   bridge's write system calls per event (/proc/PID/io): about 1 minute a round
#   --against BINARY
#                   only paired paced runs of this tree's aseqosc and another build of it (e.g.
#                   one saved from an earlier commit), MIDI -> OSC (and OSC -> MIDI with
#                   --reverse), 2 pairs per --rounds, each build once as stream a; prints each
#                   pair's p50 ratio (this / other) and their median: an A/B of a change, about
#                   10 s a pair
#   --load-only     only paced MIDI -> OSC runs (1,000 events/s) of aseqosc with real-time threads,
#                   aseqosc with `realtime: false`, m2o and the bare forwarder, each unloaded and
#                   then with a CPU hog (a busy loop at normal priority), --rounds times; prints
#                   p50/p99 per bridge and the hog/unloaded ratios (Benchmarks/e2e/load.py):
#                   about 1 minute a round. Benchmarks/load.sh runs it
#   --here          run on this machine's own /dev/snd/seq instead of in the VM: no emulator, so
#                   wall-clock latency and rate mean what they say (needs osmid and valgrind
#                   installed, the UDP ports 57120-57121 and 57200-57201 free, and root for
#                   --trace-only)
#   --out DIR       where binaries, logs and results go (default .build/bench)
#
# Builds on the host: the bare forwarder and the load generator (gcc -O2 -lasound), aseqosc
# (swift build -c release). Then runs Benchmarks/e2e/in-vm.sh in the VM (or here) and prints the tables
# (Benchmarks/e2e/summarise.py) that BENCHMARKS.md shows.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.build/bench
vm_args=()
trace_only=0 bundles_only=0 against_only=0 load_only=0 here=0
while [ $# -gt 0 ]; do
  case "$1" in
    --reverse|--no-callgrind|--quick|--paired) vm_args+=("$1"); shift ;;
    --trace-only) vm_args+=("$1"); trace_only=1; shift ;;
    --bundles-only) vm_args+=("$1"); bundles_only=1; shift ;;
    --load-only) vm_args+=("$1"); load_only=1; shift ;;
    --rounds)
      case "${2:-}" in
        [1-9]|[1-9][0-9]) vm_args+=("$1" "$2"); shift 2 ;;
        *) echo "e2e.sh: --rounds takes a number from 1 to 99 (try --help)" >&2; exit 64 ;;
      esac ;;
    --callgrind-only)
      case "${2:-}" in
        aseqosc.m2o|m2o.m2o|bare.m2o|aseqosc.o2m|o2m.o2m|bare.o2m) vm_args+=("$1" "$2"); shift 2 ;;
        *) echo "e2e.sh: --callgrind-only takes BRIDGE.DIRECTION, e.g. aseqosc.o2m (try --help)" >&2; exit 64 ;;
      esac ;;
    --against)
      [ -x "${2:-}" ] || { echo "e2e.sh: --against takes an aseqosc binary (try --help)" >&2; exit 64; }
      vm_args+=("$1" "$(realpath "$2")"); against_only=1; shift 2 ;;
    --here) here=1; shift ;;
    --out) out=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "e2e.sh: unknown option $1 (try --help)" >&2; exit 64 ;;
  esac
done
if [ "$here" = 1 ]; then
  [ -e /dev/snd/seq ] || {
    echo "e2e.sh --here: this machine has no ALSA sequencer (/dev/snd/seq does not exist); leave out --here to run in the VM" >&2
    exit 69
  }
  for tool in m2o o2m valgrind; do
    command -v $tool > /dev/null || { echo "e2e.sh --here: $tool is not installed (apt-get install osmid valgrind)" >&2; exit 69; }
  done
fi
mkdir -p "$out"
case "$(realpath -m "$out")" in
  "$(pwd -P)"/*) ;;
  *) echo "e2e.sh: --out must be inside the repository (the VM shares only this directory)" >&2; exit 64 ;;
esac

echo "== build (host)" >&2
gcc -O2 -Wall -o "$out/bare-forwarder" Benchmarks/e2e/bare-forwarder.c -lasound
gcc -O2 -Wall -o "$out/loadgen" Benchmarks/e2e/loadgen.c -lasound -lm
# E2E_NO_BUILD=1 measures .build/release/aseqosc as it is (say, the test suite's build);
# E2E_NO_REALTIME=1 (below) runs it with `realtime: false`.
[ "${E2E_NO_BUILD:-0}" = 1 ] ||
  swift build -c release -j "${JOBS:-2}" --product aseqosc 2>&1 | grep -E "error|warning: |Compiling|Build" >&2 || true
[ -x .build/release/aseqosc ] || { echo "e2e.sh: no .build/release/aseqosc" >&2; exit 70; }

# MIDI -> OSC: one input bound to the generator by name, one destination with the default
# scheme. OSC -> MIDI: o2m's addresses in, one output bound to the generator by name. The "-b"
# configs are the second bridge of a paired run: the generator's second port and the next UDP
# port.
for side in a b; do
  if [ $side = a ]; then suffix="" from=loadgen forward_port=57120 reverse_port=57200
  else suffix=-b from=loadgen:1 forward_port=57121 reverse_port=57201; fi
  cat > "$out/aseqosc$suffix.json5" <<JSON5
{
  client: "aseqosc",
  inputs: [{ name: "in", from: ["$from"] }],
  routes: [
    {
      name: "bench",
      from: ["in"],
      operators: [],
      destinations: [{ host: "127.0.0.1", port: $forward_port, scheme: "default" }],
    },
  ],
}
JSON5
  cat > "$out/aseqosc-reverse$suffix.json5" <<JSON5
{
  client: "aseqosc",
  outputs: [{ name: "bench", to: ["$from"] }],
  osc: { listen: "127.0.0.1:$reverse_port" },
}
JSON5
  # The same bridge with its threads at normal priority (--load-only).
  sed 's/^  client: "aseqosc",$/&\n  realtime: false,/' "$out/aseqosc$suffix.json5" > "$out/aseqosc-nort$suffix.json5"
  # Real-time threads that may move to any CPU (`realtime.cpu: false`; Benchmarks/rt-hog.sh).
  sed 's/^  client: "aseqosc",$/&\n  realtime: { cpu: false },/' "$out/aseqosc$suffix.json5" > "$out/aseqosc-unpinned$suffix.json5"
  # E2E_NO_REALTIME=1: the plain runs' aseqosc at normal priority (the callgrind runs among
  # them); after the variants above are made, which keep their own `realtime`.
  if [ "${E2E_NO_REALTIME:-0}" = 1 ]; then
    sed -i 's/^  client: "aseqosc",$/&\n  realtime: false,/' "$out/aseqosc$suffix.json5" "$out/aseqosc-reverse$suffix.json5"
  fi
  .build/release/aseqosc check "$out/aseqosc$suffix.json5" >&2
  .build/release/aseqosc check "$out/aseqosc-reverse$suffix.json5" >&2
done

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "host: nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)"
  echo "aseqosc: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources || echo '+changes')"
  echo "m2o/o2m: $(dpkg-query -W -f '${Version}' osmid 2>/dev/null || echo unknown)"
  echo "valgrind: $(valgrind --version 2>/dev/null || echo none)"
} > "$out/machine.txt"

if [ "$here" = 1 ]; then
  echo "== runs (here, on /dev/snd/seq)" >&2
  Benchmarks/e2e/in-vm.sh "$out" "${vm_args[@]}"
  # summarise.py reads this line to say where the runs were.
  echo "where: this machine's sequencer, no VM" >> "$out/machine.txt"
else
  echo "== runs (VM)" >&2
  ALSA_VM_TIMEOUT=${ALSA_VM_TIMEOUT:-3600} ALSA_VM_MEM=${ALSA_VM_MEM:-1024} \
    scripts/alsa-vm -- Benchmarks/e2e/in-vm.sh "$out" "${vm_args[@]}"
  echo "vm: kernel $(cat "$out/vm-kernel.txt"), nproc $(cat "$out/vm-nproc.txt"), software emulation (TCG)" >> "$out/machine.txt"
fi

if [ "$trace_only" = 1 ]; then
  python3 Benchmarks/e2e/trace-segments.py "$out"/trace.*.txt
elif [ "$bundles_only" = 1 ]; then
  python3 Benchmarks/e2e/bundles.py "$out/results.txt"
elif [ "$load_only" = 1 ]; then
  python3 Benchmarks/e2e/load.py "$out"
elif [ "$against_only" = 1 ]; then
  python3 Benchmarks/e2e/against.py "$out/results.txt"
else
  python3 Benchmarks/e2e/summarise.py "$out"
fi
