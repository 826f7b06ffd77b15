#!/usr/bin/env bash
# page.sh: does a status page watching slow the music (issue 37)? In ONE scripts/alsa-vm
# session, the load generator paces a burst into two instances of the same aseqosc at once
# (loadgen --pair, RATE events/s to each, the sends taking turns), MIDI -> OSC and then
# OSC -> MIDI. Both serve OSCQuery and the status page; on one a page watches
# (Benchmarks/page/watch.py: the page's WebSocket, STATUS and MONITOR, every frame read and
# discarded, its EVENTS lines and DROPPED counted), on the other nobody is connected. Paired,
# both meet the emulated VM in the same moods; each pair is run twice, the watched instance
# once as stream a and once as stream b. Two vCPUs: both bridges' event threads on the first;
# the generator (SCHED_FIFO 70) and the page's client on the second (on one vCPU the generator
# could not carry 20,000 events/s beside them and lost most of the burst). The rest of each
# bridge, the page's server among it, is placed each way of --placements: "shared" (on the
# event threads' vCPU, as on a machine with one CPU), "apart" (on the other vCPU, as on a
# machine with CPUs to spare) or "free" (where the scheduler puts it). --commands are what the
# page asks for (add PAUSE for a paused monitor).
#
#   Benchmarks/page.sh [--rounds N] [--rate R] [--count N] [--directions "m2o o2m"]
#                      [--placements "shared apart"] [--commands "STATUS MONITOR"] [--out DIR]
#                      (defaults as shown, 3 rounds, 10,000 events/s to each, 20,000 each:
#                      ~1 min a round)
#
# Prints each pair and a table: watched / closed paced p50 and p99 (medians over the pairs),
# and what the page received (lines, and the events dropped from the monitor's rings).
# Builds aseqosc (release) unless E2E_NO_BUILD=1; results in .build/bench-page/.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3 rate=10000 count=20000 out=.build/bench-page directions="m2o o2m" placements="shared apart" commands="STATUS MONITOR"
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --directions) directions=$2; shift 2 ;;
    --placements) placements=$2; shift 2 ;;
    --commands) commands=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "page.sh: unknown option $1 (try --help)" >&2; exit 64 ;;
  esac
done
mkdir -p "$out"
out=$(realpath "$out")
case "$out" in
  "$(pwd -P)"/*) ;;
  *) echo "page.sh: --out must be inside the repository (the VM writes only there)" >&2; exit 64 ;;
esac
gcc -O2 -Wall -o "$out/loadgen" Benchmarks/e2e/loadgen.c -lasound -lm
[ "${E2E_NO_BUILD:-0}" = 1 ] ||
  swift build -c release -j "${JOBS:-2}" --product aseqosc 2>&1 | grep -E "error|warning: " >&2 || true
[ -x .build/release/aseqosc ] || { echo "page.sh: no .build/release/aseqosc" >&2; exit 70; }
cp .build/release/aseqosc "$out/aseqosc"

# Stream a on the generator's first port and the first UDP ports, stream b on the next ones;
# each instance's OSCQuery server (and page) on a port of its own.
for side in a b; do
  if [ $side = a ]; then from=loadgen n=0; else from=loadgen:1 n=1; fi
  cat > "$out/forward-$side.json5" <<JSON5
{
  client: "aseqosc",
  inputs: [{ name: "in", from: ["$from"] }],
  routes: [
    {
      name: "bench",
      from: ["in"],
      destinations: [{ host: "127.0.0.1", port: $((57120 + n)), scheme: "default" }],
    },
  ],
  // The page is served by the OSC input's OSCQuery server, and an OSC input needs an output.
  outputs: [{ name: "thru", to: ["Midi Through"] }],
  osc: { listen: "127.0.0.1:$((57140 + n))", query: { port: $((57130 + n)) } },
}
JSON5
  cat > "$out/reverse-$side.json5" <<JSON5
{
  client: "aseqosc",
  outputs: [{ name: "bench", to: ["$from"] }],
  osc: { listen: "127.0.0.1:$((57200 + n))", query: { port: $((57210 + n)) } },
}
JSON5
  "$out/aseqosc" check "$out/forward-$side.json5" > /dev/null
  "$out/aseqosc" check "$out/reverse-$side.json5" > /dev/null
done
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "aseqosc: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources || echo '+changes')"
  echo "rounds: $rounds, rate: $rate events/s to each bridge, count: $count each, placements: $placements, page: $commands"
} > "$out/machine.txt"
: > "$out/results.txt"
ALSA_VM_QUIET=1 ALSA_VM_SMP=2 ALSA_VM_MEM=1024 ALSA_VM_TIMEOUT=${ALSA_VM_TIMEOUT:-1800} \
  scripts/alsa-vm -- Benchmarks/page/in-vm.sh "$out" "$rounds" "$rate" "$count" "$directions" "$placements" "$commands" > "$out/vm.log" 2>&1 ||
  { echo "page.sh: the VM run failed:" >&2; tail -n 20 "$out/vm.log" >&2; exit 1; }
cat "$out/vm.log" >&2
echo "vm: kernel $(cat "$out/vm-kernel.txt"), software emulation (TCG), 2 vCPUs" >> "$out/machine.txt"
cat "$out/machine.txt"
python3 Benchmarks/page/summarise.py "$out/results.txt"
