#!/bin/sh
# mappings.sh: what OSC -> MIDI through mapping rules costs as the rules and the addresses a
# sender uses grow (issue 20, "no cliffs"), in instructions per message counted by callgrind
# (deterministic, so any machine will do, busy or not), and what loading the rules costs.
#
#   Benchmarks/mappings.sh                 # the current tree (builds aseqosc-bench and aseqosc)
#   Benchmarks/mappings.sh bc1740f         # also that commit, built in a temporary worktree
#
# Workloads (aseqosc-bench --only, Benchmarks/aseqosc-bench/MappingsWorkload.swift): what the
# bridge's OSC thread does per datagram short of the ALSA write (validate, translate through the
# address table made at load, run the route):
#   mappings_N            N literal rules (/layout/ctlI ,f -> a CC), messages cycling all N addresses
#   mappings_template_N   one rule /layout/ctl{n}, messages cycling N addresses
#   mappings_spray_1000   1,000 rules, every message at a new address no rule matches (a hostile sender)
#   mappings_load_N       parsing N rules' addresses, building the translator and its table (per rule)
# Each runs twice under callgrind, with one and with two timed repetitions (after a warm-up
# one), and the difference in instructions is divided by one repetition's messages, so start-up
# and set-up cancel. `aseqosc check` on a generated config with 100 and 1,000 mappings gives the
# whole config load (JSON5 included): instructions per rule from the difference, and the wall
# time of the 1,000.
#
# An older commit gets this file's workload sources copied in (they use only API that commit
# has) and a MappingsBridgePath.swift with what its bridge did: the quick path and the address
# cache sized to the rules (so REF must predate the address table). Builds
# take the shared build lock (/tmp/aseqosc-build.lock); the current tree builds in
# .build/mappings/build. Output: one table, also written to
# .build/mappings/table.txt.
set -eu
cd "$(dirname "$0")/.."
. Benchmarks/lib/before-table.sh
here=$(pwd)
out=$here/.build/mappings
mkdir -p "$out"
workloads="mappings_10 mappings_100 mappings_1000 mappings_template_10 mappings_template_1000 mappings_spray_1000 mappings_load_100 mappings_load_1000"

build() { # DIR BUILD: the two products, in BUILD (a build directory of its own, so the tests'
  # build in .build, made with other flags, is not rebuilt)
  (cd "$1" && flock /tmp/aseqosc-build.lock swift build -c release -j 2 --scratch-path "$2" --product aseqosc-bench >&2 &&
    flock /tmp/aseqosc-build.lock swift build -c release -j 2 --scratch-path "$2" --product aseqosc >&2)
}

config() { # N: a config with N mappings, one output
  python3 - "$1" <<'EOF'
import sys
n = int(sys.argv[1])
print('{ outputs: [{ name: "synth", to: [] }], osc: { mappings: [')
for i in range(n):
    print(f'  {{ address: "/layout/ctl{i}", args: "f", output: "synth", type: "control_change", channel: {1 + i % 16},'
          f' controller: {i % 128}, value: {{ from: "{{0}}", in: [0, 1], out: [0, 127] }} }},')
print('] } }')
EOF
}

total() { grep -E '^(summary|totals):' "$1" | head -n 1 | awk '{print $2}'; }

measure() { # LABEL BUILD: one column of numbers in $out/LABEL.txt
  label=$1 bin=$2/release
  : > "$out/$label.txt"
  for workload in $workloads; do
    for repetitions in 1 2; do
      valgrind --tool=callgrind --callgrind-out-file="$out/cg.$label.$workload.$repetitions" \
        "$bin/aseqosc-bench" --quick --repetitions $repetitions --only $workload > /dev/null 2>&1
    done
    case $workload in
      mappings_spray_*) events=2000 ;;
      mappings_load_*) events=${workload##*_} ;;
      *) events=20000 ;;
    esac
    one=$(total "$out/cg.$label.$workload.1")
    two=$(total "$out/cg.$label.$workload.2")
    echo "$workload $(( (two - one) / events ))" >> "$out/$label.txt"
  done
  for n in 100 1000; do
    config $n > "$out/rules$n.json5"
    valgrind --tool=callgrind --callgrind-out-file="$out/cg.$label.check.$n" \
      "$bin/aseqosc" check "$out/rules$n.json5" > /dev/null 2>&1
  done
  echo "check_per_rule $(( ($(total "$out/cg.$label.check.1000") - $(total "$out/cg.$label.check.100")) / 900 ))" >> "$out/$label.txt"
  start=$(date +%s%N)
  "$bin/aseqosc" check "$out/rules1000.json5" > /dev/null
  echo "check_1000_ms $(( ($(date +%s%N) - start) / 1000000 ))" >> "$out/$label.txt"
}

build "$here" "$out/build"
measure after "$out/build"
columns=after
if [ $# -gt 0 ]; then
  rev=$(git rev-parse --short "$1")
  tree=$(mktemp -d /tmp/aseqosc-before.XXXXXX)
  trap 'git -C "$here" worktree remove --force "$tree" 2>/dev/null || true' EXIT
  git worktree add --detach "$tree" "$rev" > /dev/null 2>&1
  cp Benchmarks/aseqosc-bench/MappingsWorkload.swift Benchmarks/aseqosc-bench/main.swift "$tree/Benchmarks/aseqosc-bench/"
  rm -f "$tree/Benchmarks/aseqosc-bench/MappingsCache.swift"
  before_table_bench "$tree"
  build "$tree" "$tree/.build"
  measure "before-$rev" "$tree/.build"
  columns="before-$rev after"
fi

{
  printf '%-34s' "instructions"
  for column in $columns; do printf '%16s' "$column"; done
  echo
  for key in $workloads check_per_rule check_1000_ms; do
    case $key in
      mappings_load_*) name="$key (per rule)" ;;
      check_per_rule) name="check (per rule)" ;;
      check_1000_ms) name="check 1000 (ms wall)" ;;
      *) name="$key (per msg)" ;;
    esac
    printf '%-34s' "$name"
    for column in $columns; do printf '%16s' "$(awk -v k="$key" '$1 == k {print $2}' "$out/$column.txt")"; done
    echo
  done
} | tee "$out/table.txt"
