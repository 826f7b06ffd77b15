# Sourced by scripts/test and the scripts it runs: reading a test run's counts from its log.

# Prints "executed skipped failed" from an XCTest log's final summary line.
xctest_counts() {
  grep -E 'Executed [0-9]+ tests?, with' "$1" | tail -n 1 |
    sed -E 's/.*Executed ([0-9]+) tests?, with (([0-9]+) tests? skipped and )?([0-9]+) failures?.*/\1 \3 \4/' |
    awk '{ if (NF == 2) print $1, 0, $2; else print $1, $2, $3 }'
}

# Prints "run failed" from a Swift Testing log ("Test run with N tests ..." and one "✘ Test X
# failed" line per failing test); $2 is the run's exit status: a run that failed without a
# failing test (a crash) counts one failure.
swift_testing_counts() {
  local run failed
  run=$(grep -Eo 'Test run with [0-9]+ tests?' "$1" | tail -n 1 | grep -Eo '[0-9]+')
  failed=$(grep -Ec '^✘ Test [^r].* failed' "$1")
  [ "$2" = 0 ] || [ "$failed" -gt 0 ] || failed=1
  echo "${run:-0} $failed"
}

# Prints "passed failed" from a script's last line "NAME: N passed, M failed" in LOG.
summary_counts() {
  grep -E "^$1: [0-9]+ passed, [0-9]+ failed" "$2" | tail -n 1 | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/'
}
