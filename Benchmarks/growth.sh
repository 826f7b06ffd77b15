#!/bin/sh
# growth.sh: what one more destination, route, operator, mapping rule or SysEx byte costs, and
# a lone event against a batched one (issue 20), in instructions per event counted by callgrind;
# m2o beside aseqosc where it can do the same (destinations, SysEx size), in one VM run. Writes
# a table with the slope per unit and a PNG per curve.
#
#   Benchmarks/growth.sh             # in-process sweeps, then the VM run (~35 min, mostly the VM)
#   Benchmarks/growth.sh --no-vm     # in-process sweeps only (~5 min)
#   Benchmarks/growth.sh [--no-vm] bc1740f
#                                    # also the in-process sweeps of REF's sources built with this
#                                    # tree's benchmark, as fanout.sh does (the "before" column;
#                                    # the mappings workloads get the address cache and quick
#                                    # path REF's bridge had, as mappings.sh does; REF must
#                                    # predate the address table)
#
# Needs valgrind, gcc, libasound2-dev, osmid (m2o) and gnuplot (apt-get install gnuplot-nox).
# In-process (aseqosc-bench --only KEY, on the host: callgrind counts are the same on any
# machine, busy or not): each workload runs with one and with two timed repetitions of --quick,
# and the difference in instructions is divided by one repetition's events, so start-up and
# set-up cancel.
#   destinations   fanout_N: one forwarding route to N loopback UDP destinations, a flush every
#                  64 events (batched) or after every event (fanout_lone_N, lone)
#   routes         routes_N: N forwarding routes, all taking every event, a destination each
#   operators      operators_N: one route of N operators that keep every event
#   mapping rules  mappings_N: N literal rules, messages cycling N addresses (OSC -> MIDI);
#                  mappings_template_N: one template rule, N addresses
#   SysEx          sysex_N: every event a SysEx message of N bytes, to one destination
# In the VM (Benchmarks/growth/in-vm.sh): aseqosc and m2o, whole processes under callgrind,
# forwarding 500 and 2,500 events (the difference over 2,000), to 1/4/16/64 destinations and
# with SysEx of 16/128/512 bytes. m2o has no routes, operators or mapping rules, and sends
# every event on its own (no batching): those rows have no peer.
#
# Builds take the shared build lock (/tmp/aseqosc-build.lock): do not run this script under it.
# Output in .build/growth: results.txt (every count), table.md (the table in BENCHMARKS.md) and
# growth-*.png (copied to docs/images/).
set -eu
cd "$(dirname "$0")/.."
. Benchmarks/lib/before-table.sh
out=.build/growth
vm=1 ref=""
[ "${1:-}" = --no-vm ] && { vm=0; shift; }
[ $# -gt 0 ] && ref=$1
for tool in valgrind gnuplot gcc python3; do
  command -v $tool > /dev/null || { echo "growth.sh: needs $tool (gnuplot: apt-get install gnuplot-nox)" >&2; exit 69; }
done
[ $vm = 0 ] || command -v m2o > /dev/null || { echo "growth.sh: needs m2o (apt-get install osmid), or --no-vm" >&2; exit 69; }
mkdir -p "$out"

echo "== build" >&2
flock /tmp/aseqosc-build.lock swift build -c release -j 2 --product aseqosc-bench >&2
flock /tmp/aseqosc-build.lock swift build -c release -j 2 --product aseqosc >&2
bench=.build/release/aseqosc-bench

total() { grep -E '^(summary|totals):' "$1" | head -n 1 | awk '{print $2}'; }

# inprocess DIMENSION KEY_PREFIX EVENTS N...: one line "INPROCESS dimension=.. n=.. per_event=.."
# per N, into $results, from $bench.
inprocess() {
  dimension=$1 prefix=$2 events=$3
  shift 3
  for n in "$@"; do
    for repetitions in 1 2; do
      valgrind --tool=callgrind --callgrind-out-file="$out/cg.$prefix$n.$repetitions" \
        "$bench" --quick --repetitions $repetitions --only "$prefix$n" > /dev/null 2>&1
    done
    per=$(( ($(total "$out/cg.$prefix$n.2") - $(total "$out/cg.$prefix$n.1")) / events ))
    echo "INPROCESS dimension=$dimension n=$n per_event=$per" | tee -a "$results" >&2
  done
}

sweeps() { # into $results, from $bench
  : > "$results"
  inprocess destinations fanout_ 10000 1 4 16 64
  inprocess destinations_lone fanout_lone_ 10000 1 4 16 64
  inprocess routes routes_ 10000 1 8 32
  inprocess operators operators_ 10000 0 5 20
  inprocess mappings mappings_ 20000 10 100 1000
  inprocess mappings_template mappings_template_ 20000 10 100 1000
  inprocess sysex sysex_ 10000 16 128 512 1024 4096
}

echo "== in-process (callgrind)" >&2
results=$out/inprocess.txt sweeps
rm -f "$out/inprocess-before.txt"
if [ -n "$ref" ]; then
  base=.build/growth-$ref
  if [ ! -x "$base/.build/release/aseqosc-bench" ]; then
    rm -rf "$base"
    mkdir -p "$base"
    git archive "$ref" | tar -x -C "$base"
    rm -rf "$base/Benchmarks/aseqosc-bench"
    cp -R Benchmarks/aseqosc-bench "$base/Benchmarks/aseqosc-bench"
    before_table_bench "$base"
    (cd "$base" && flock /tmp/aseqosc-build.lock swift build -c release -j 2 --product aseqosc-bench \
      > "$base/build.log" 2>&1) || { tail -n 20 "$base/build.log"; exit 1; }
  fi
  echo "== in-process, $ref (callgrind)" >&2
  bench=$base/.build/release/aseqosc-bench results=$out/inprocess-before.txt sweeps
  echo "$ref" > "$out/before-ref.txt"
fi

if [ $vm = 1 ]; then
  echo "== VM: aseqosc and m2o under callgrind" >&2
  gcc -O2 -Wall -o "$out/loadgen" Benchmarks/e2e/loadgen.c -lasound -lm
  # One forwarding route to D destinations: the generator's port, then the ports loadgen
  # --sinks binds (57220 up).
  for d in 1 4 16 64; do
    {
      echo '{ client: "aseqosc", inputs: [{ name: "in", from: ["loadgen"] }],'
      echo '  routes: [{ name: "bench", from: ["in"], operators: [], destinations: ['
      echo '    { host: "127.0.0.1", port: 57120, scheme: "default" },'
      k=0
      while [ $k -lt $((d - 1)) ]; do
        echo "    { host: \"127.0.0.1\", port: $((57220 + k)), scheme: \"default\" },"
        k=$((k + 1))
      done
      echo '  ] }] }'
    } > "$out/destinations-$d.json5"
    .build/release/aseqosc check "$out/destinations-$d.json5" > /dev/null
  done
  : > "$out/results.txt"
  ALSA_VM_TIMEOUT=${ALSA_VM_TIMEOUT:-3600} ALSA_VM_MEM=${ALSA_VM_MEM:-1024} \
    scripts/alsa-vm -- Benchmarks/growth/in-vm.sh "$out" 500 2500
fi

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "aseqosc: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Benchmarks || echo '+changes')"
  echo "m2o: $(dpkg-query -W -f '${Version}' osmid 2>/dev/null || echo unknown)"
} > "$out/machine.txt"
python3 Benchmarks/growth/summarise.py "$out"
mkdir -p docs/images
cp "$out"/growth-*.png docs/images/
cat "$out/table.md"
