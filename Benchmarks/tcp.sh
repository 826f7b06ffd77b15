#!/usr/bin/env bash
# tcp.sh: MIDI -> OSC over TCP against UDP to the same receiver, in ONE scripts/alsa-vm session:
# two aseqosc bridges driven at once by the load generator (loadgen --pair), A sending its OSC
# over UDP, B over TCP (`protocol: "tcp"`, length-prefixed), each to loadgen's own receiver on
# 127.0.0.1. Paced runs (500 events/s per bridge, as e2e.sh --paired) give latency p50/p99; windowed runs (16
# events in flight per bridge) give events/s; the bridges swap sides between rounds.
#
#   Benchmarks/tcp.sh [--rounds N] [--out DIR]      (default 3 rounds, about a minute each)
#
# Prints one line per run and a table of the medians and the TCP/UDP ratios (BENCHMARKS.md, "Other runs").
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3 out=.build/bench-tcp
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "tcp.sh: unknown option $1" >&2; exit 64 ;;
  esac
done
mkdir -p "$out"
out=$(realpath "$out")
gcc -O2 -Wall -o "$out/loadgen" Benchmarks/e2e/loadgen.c -lasound -lm
[ "${E2E_NO_BUILD:-0}" = 1 ] ||
  swift build -c release -j "${JOBS:-2}" --product aseqosc 2>&1 | grep -E "error|warning: " >&2 || true
[ -x .build/release/aseqosc ] || { echo "tcp.sh: no .build/release/aseqosc" >&2; exit 70; }
cp .build/release/aseqosc "$out/aseqosc"
# Side a: the generator's first port and 57120; side b: its second port and 57121.
for protocol in udp tcp; do
  for side in a b; do
    if [ $side = a ]; then from=loadgen port=57120; else from=loadgen:1 port=57121; fi
    extra=""
    [ $protocol = tcp ] && extra=', protocol: "tcp"'
    cat > "$out/$protocol-$side.json5" <<JSON5
{
  client: "aseqosc-$protocol",
  inputs: [{ name: "in", from: ["$from"] }],
  routes: [{ name: "bench", destinations: [{ host: "127.0.0.1", port: $port$extra }] }],
}
JSON5
    "$out/aseqosc" check "$out/$protocol-$side.json5" > /dev/null
  done
done
: > "$out/results.txt"
ALSA_VM_QUIET=1 ALSA_VM_TIMEOUT=${ALSA_VM_TIMEOUT:-1200} \
  scripts/alsa-vm -- Benchmarks/tcp/in-vm.sh "$out" "$rounds" > "$out/vm.log" 2>&1 ||
  { echo "tcp.sh: the VM run failed:" >&2; tail -n 20 "$out/vm.log" >&2; exit 1; }
grep -E '^(paced|window)' "$out/vm.log" >&2 || true
python3 Benchmarks/tcp/summarise.py "$out/results.txt"
