#!/bin/sh
# inprocess-callgrind.sh: instructions per event for aseqosc-bench's workloads, which do not
# depend on how busy the machine is (the timed numbers do). Each workload runs twice under
# callgrind, with one and with two timed repetitions of --quick (200,000 wire events; the encode
# workloads see the 175,000 route outputs), and the difference
# in total Ir is divided by one repetition's events, so start-up and set-up cancel.
#
#   swift build -c release -j 2 --product aseqosc-bench && Benchmarks/inprocess-callgrind.sh
#
# WORKLOADS="osc_to_midi" runs only the ones named. Per-function shares: Benchmarks/e2e/callgrind-diff.py .build/cg.WORKLOAD.1.out 0
# .build/cg.WORKLOAD.2.out EVENTS.
set -eu
cd "$(dirname "$0")/.."
bench=.build/release/aseqosc-bench
workloads=${WORKLOADS:-pipeline_aseqosc pipeline_liblo encode_aseqosc encode_liblo osc_to_midi}
for workload in $workloads; do
  for repetitions in 1 2; do
    valgrind --tool=callgrind --callgrind-out-file=.build/cg.$workload.$repetitions.out \
      $bench --quick --repetitions $repetitions --only $workload > /dev/null 2>&1
  done
  one=$(grep -E '^(summary|totals):' .build/cg.$workload.1.out | head -n 1 | awk '{print $2}')
  two=$(grep -E '^(summary|totals):' .build/cg.$workload.2.out | head -n 1 | awk '{print $2}')
  case $workload in encode_*) events=175000 ;; ring_*) events=2000000 ;; *) events=200000 ;; esac
  echo "$workload $(( (two - one) / events )) instructions/event"
done
