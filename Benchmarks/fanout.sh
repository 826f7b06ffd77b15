#!/bin/sh
# fanout.sh: user-space instructions per input event for one route to 1, 4, 16 and 64 OSC/UDP
# destinations (aseqosc-bench's fanout_N workloads: forward-only route, default scheme, real
# loopback sockets), with a flush every 64 events as the input thread does ("batched") and
# after every event ("lone", a keypress on an idle bridge). Counted by callgrind, which is
# deterministic, so any machine will do: each workload runs with one and with two timed
# repetitions of --quick (10,000 events), and the difference in total Ir is divided by 10,000,
# so start-up and set-up cancel. The slope is what one more destination costs.
#
#   swift build -c release -j 2 --build-tests -Xswiftc -enable-testing && Benchmarks/fanout.sh
#   Benchmarks/fanout.sh bc1740f    # also builds REF's sources with this tree's benchmark, and
#                                   # prints REF's table first (the "before")
#
# The build of REF takes the build lock itself (BUILD_LOCK, default /tmp/aseqosc-build.lock): do
# not run this script under that lock. DESTINATIONS="1 4" and MODES="batched" narrow the runs.
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
destinations=${DESTINATIONS:-1 4 16 64}
modes=${MODES:-batched lone}
events=10000

# measure BENCH LABEL: prints one table per mode.
measure() {
  bench=$1
  label=$2
  for mode in $modes; do
    echo "$label, $mode (flush every $([ "$mode" = lone ] && echo event || echo 64 events))"
    printf '  %-12s %14s %22s\n' destinations instr/event "slope (per destination)"
    previous_n=
    previous=
    at1=
    at4=
    for n in $destinations; do
      workload=fanout_$n
      [ "$mode" = lone ] && workload=fanout_lone_$n
      for repetitions in 1 2; do
        valgrind --tool=callgrind --callgrind-out-file="$root/.build/cg.$label.$workload.$repetitions.out" \
          "$bench" --quick --repetitions $repetitions --only $workload > /dev/null 2>&1
      done
      one=$(grep -E '^(summary|totals):' "$root/.build/cg.$label.$workload.1.out" | head -n 1 | awk '{print $2}')
      two=$(grep -E '^(summary|totals):' "$root/.build/cg.$label.$workload.2.out" | head -n 1 | awk '{print $2}')
      per=$(( (two - one) / events ))
      slope=-
      if [ -n "$previous" ]; then
        slope=$(( (per - previous) / (n - previous_n) ))
        slope="$slope ($previous_n->$n)"
      fi
      printf '  %-12s %14s %22s\n' "$n" "$per" "$slope"
      [ "$n" = 1 ] && at1=$per
      [ "$n" = 4 ] && at4=$per
      previous_n=$n
      previous=$per
    done
    if [ -n "$at1" ] && [ -n "$at4" ] && [ "$previous_n" -gt 4 ]; then
      # The goal (issue 20): one more destination costs from 4 to N within ~1.3x of 1 to 4.
      awk -v a="$at1" -v b="$at4" -v c="$previous" -v n="$previous_n" 'BEGIN {
        printf "  slope 4->%d / slope 1->4: %.2f\n", n, ((c - b) / (n - 4)) / ((b - a) / 3) }'
    fi
  done
}

if [ $# -ge 1 ]; then
  ref=$1
  base="$root/.build/fanout-$ref"
  if [ ! -x "$base/.build/release/aseqosc-bench" ]; then
    rm -rf "$base"
    mkdir -p "$base"
    git archive "$ref" | tar -x -C "$base"
    # REF's sources, this tree's benchmark (REF may not have the fanout workloads).
    rm -rf "$base/Benchmarks/aseqosc-bench"
    cp -R Benchmarks/aseqosc-bench "$base/Benchmarks/aseqosc-bench"
    (cd "$base" && flock "${BUILD_LOCK:-/tmp/aseqosc-build.lock}" \
      swift build -c release -j 2 --product aseqosc-bench > "$base/build.log" 2>&1) ||
      { tail -n 20 "$base/build.log"; exit 1; }
  fi
  measure "$base/.build/release/aseqosc-bench" "$ref"
  echo
fi
measure .build/release/aseqosc-bench "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources || echo +)"
