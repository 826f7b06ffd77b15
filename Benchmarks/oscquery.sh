#!/usr/bin/env bash
# oscquery.sh: does hostile HTTP on the OSCQuery port slow OSC -> MIDI? In ONE scripts/alsa-vm
# session, the load generator paces OSC into a bridge (1,000 events/s, o2m's addresses, its
# MIDI coming back to the generator's port) and measures each event's latency, while a flood
# runs or not: 12 silent connections held open and re-opened as the server closes them, four
# clients fetching the whole namespace (GET /) back to back, and oversized request lines and
# garbage. Each round measures aseqosc quiet, aseqosc flooded, and osmid's o2m quiet and under
# the same flood (which o2m does not serve, so its figure is what the flood costs the machine).
# Two vCPUs: the flood's client on the second (a client is another machine's load), the load
# generator at SCHED_FIFO 70 so that it is never the one starved.
#
#   Benchmarks/oscquery.sh [--rounds N] [--out DIR]      (default 3 rounds, about a minute each)
#
# Prints one line per run and a table of medians (BENCHMARKS.md, "Other runs").
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3 out=.build/bench-oscquery
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "oscquery.sh: unknown option $1" >&2; exit 64 ;;
  esac
done
command -v o2m > /dev/null || { echo "oscquery.sh: o2m is missing (apt-get install osmid)" >&2; exit 69; }
mkdir -p "$out"
out=$(realpath "$out")
gcc -O2 -Wall -o "$out/loadgen" Benchmarks/e2e/loadgen.c -lasound -lm
[ "${E2E_NO_BUILD:-0}" = 1 ] ||
  swift build -c release -j "${JOBS:-2}" --product aseqosc 2>&1 | grep -E "error|warning: " >&2 || true
[ -x .build/release/aseqosc ] || { echo "oscquery.sh: no .build/release/aseqosc" >&2; exit 70; }
cp .build/release/aseqosc "$out/aseqosc"
cat > "$out/aseqosc.json5" <<'JSON5'
{
  client: "aseqosc",
  outputs: [{ name: "bench", to: ["loadgen"] }],
  osc: { listen: "127.0.0.1:57200", query: { port: 57201 } },
}
JSON5
"$out/aseqosc" check "$out/aseqosc.json5" > /dev/null
: > "$out/results.txt"
ALSA_VM_QUIET=1 ALSA_VM_SMP=2 ALSA_VM_TIMEOUT=${ALSA_VM_TIMEOUT:-1200} \
  scripts/alsa-vm -- Benchmarks/oscquery/in-vm.sh "$out" "$rounds" > "$out/vm.log" 2>&1 ||
  { echo "oscquery.sh: the VM run failed:" >&2; tail -n 20 "$out/vm.log" >&2; exit 1; }
grep -E '^(run|flood)' "$out/vm.log" >&2 || true
python3 Benchmarks/oscquery/summarise.py "$out/results.txt"
