#!/bin/sh
# in-vm.sh OUT ROUNDS: the part of Benchmarks/tcp.sh that runs in the VM. Each round: a paced
# pair and a windowed pair, UDP on one side and TCP on the other, then the sides swapped.
set -u
out=$1 rounds=$2
. "$(dirname "$0")/../lib/vm-helpers.sh"

# pair MODE PROTOCOL_A PROTOCOL_B LOADGEN_ARGS...: one loadgen --pair run of two bridges.
pair() {
  mode=$1 a=$2 b=$3
  shift 3
  tcp=""
  [ "$a" = tcp ] && tcp=a
  [ "$b" = tcp ] && tcp="${tcp}b"
  label="$mode-$a-$b-$round"
  "$out/loadgen" --label "$label.a.$a" --pair "$label.b.$b" ${tcp:+--tcp $tcp} "$@" \
    > "$out/loadgen.$label.log" 2>&1 &
  generator=$!
  wait_for_line "$out/loadgen.$label.log" ready || { kill $generator; return 1; }
  "$out/aseqosc" run --config "$out/$a-a.json5" --log-level warning --control "/run/aseqosc-a.$$" \
    > "$out/bridge.$label.a.log" 2>&1 &
  bridge_a=$!
  "$out/aseqosc" run --config "$out/$b-b.json5" --log-level warning --control "/run/aseqosc-b.$$" \
    > "$out/bridge.$label.b.log" 2>&1 &
  bridge_b=$!
  wait $generator
  stop_bridges TERM $bridge_a $bridge_b
  if grep -q '^RESULT' "$out/loadgen.$label.log"; then
    grep '^RESULT' "$out/loadgen.$label.log" >> "$out/results.txt"
    grep '^RESULT' "$out/loadgen.$label.log" | sed "s/^RESULT label=/$mode /" | cut -c1-160
  else
    echo "RESULT label=$label failed" >> "$out/results.txt"
    tail -n 5 "$out/loadgen.$label.log" "$out/bridge.$label.a.log" "$out/bridge.$label.b.log" >&2
  fi
}

round=1
while [ $round -le "$rounds" ]; do
  for sides in "udp tcp" "tcp udp"; do
    set -- $sides
    pair paced "$1" "$2" --count 2000 --rate 500 --warmup-ms 500
    pair window "$1" "$2" --count 6000 --window 16
  done
  round=$((round + 1))
done
