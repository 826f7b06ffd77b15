#!/bin/sh
# in-vm.sh: the part of Benchmarks/e2e.sh that runs inside ONE scripts/alsa-vm session. Not meant
# to be run by hand (e2e.sh builds what it needs and calls it):
#
#   in-vm.sh OUT [--reverse] [--no-callgrind] [--quick] [--rounds N] [--paired] [--callgrind-only BRIDGE.DIRECTION]
#             [--trace-only] [--bundles-only] [--against BINARY] [--load-only]
#
# OUT holds loadgen, bare-forwarder and aseqosc.json5 (built by e2e.sh) and receives
# results.txt (one RESULT or CALLGRIND line per run) and every program's log.
set -u
out=$1
shift
reverse=0 callgrind=1 quick=0 only="" rounds=1 paired=0 trace=0 bundles=0 against="" load=0
while [ $# -gt 0 ]; do
  case $1 in
    --reverse) reverse=1 ;;
    --no-callgrind) callgrind=0 ;;
    --quick) quick=1 ;;
    # The paced and windowed runs, N times over, the bridges taking turns in each round.
    --rounds) rounds=$2; shift ;;
    # In each round, also aseqosc and the bare forwarder paced at once, taking turns per event.
    --paired) paired=1 ;;
    # Only the callgrind runs of one bridge in one direction (BRIDGE.DIRECTION).
    --callgrind-only) only=$2; shift ;;
    # Only paired paced runs, both directions, under the kernel's tracer (trace-segments.py).
    --trace-only) trace=1 ;;
    # Only OSC -> MIDI with chords: bundles of 4 messages, aseqosc and o2m, N rounds.
    --bundles-only) bundles=1 ;;
    # Only paired paced runs of this aseqosc and another build (BINARY), N rounds of 2 pairs.
    --against) against=$2; shift ;;
    # Only paced MIDI -> OSC runs with and without a CPU hog, N rounds (load.py).
    --load-only) load=1 ;;
    *) echo "in-vm.sh: unknown option $1" >&2; exit 64 ;;
  esac
  shift
done
aseqosc=.build/release/aseqosc
results=$out/results.txt
: > "$results"
paced_n=2000 window_n=6000 window=16 cg_small=2000 cg_large=12000
[ "$quick" = 1 ] && paced_n=300 window_n=900 cg_small=300 cg_large=1500
forward_port=57120 reverse_port=57200

# What runs the load generator (the load runs put it under SCHED_FIFO).
loadgen_prefix=""

# wait_for_line, stop_signal, stop_bridges.
. "$(dirname "$0")/../lib/vm-helpers.sh"

# record LABEL BRIDGE_LOG...: appends the generator's RESULT lines to results.txt, or a failure
# line and the logs' last lines.
record() {
  record_label=$1
  shift
  if grep -q '^RESULT' "$out/loadgen.$record_label.log"; then
    grep '^RESULT' "$out/loadgen.$record_label.log" >> "$results"
  else
    echo "RESULT label=$record_label failed" >> "$results"
    tail -n 10 "$out/loadgen.$record_label.log" "$@" | sed 's/^/    /' >&2
  fi
}

# start_generator LABEL LOADGEN_ARGS...: starts the load generator in the background
# (generator_pid) and waits until its port exists; fails if it never does.
start_generator() {
  generator_label=$1
  shift
  # shellcheck disable=SC2086  # loadgen_prefix is a list of words without spaces
  $loadgen_prefix "$out/loadgen" --label "$generator_label" "$@" > "$out/loadgen.$generator_label.log" 2>&1 &
  generator_pid=$!
  wait_for_line "$out/loadgen.$generator_label.log" ready || { kill $generator_pid; return 1; }
}

# run LABEL SIGNAL LOADGEN_ARGS... -- BRIDGE_COMMAND...
# Starts the load generator (it creates its port and waits for the bridge to subscribe), then
# the bridge; when the generator is done, stops the bridge with SIGNAL and appends the
# generator's RESULT line to results.txt.
run() {
  run_label=$1 run_signal=$2
  shift 2
  loadgen_args=""
  while [ "$1" != "--" ]; do loadgen_args="$loadgen_args $1"; shift; done
  shift
  rm -f "$out/pid"
  # shellcheck disable=SC2086  # loadgen_args is a list of words without spaces
  start_generator "$run_label" --bridge-pid-file "$out/pid" $loadgen_args || return
  "$@" > "$out/bridge.$run_label.log" 2>&1 &
  bridge_pid=$!
  echo $bridge_pid > "$out/pid"
  wait $generator_pid
  # The bridge's write-type system calls so far (write, sendto, sendmmsg...; /proc/PID/io).
  echo "WRITES label=$run_label syscw=$(awk '/^syscw:/ { print $2 }' /proc/$bridge_pid/io 2>/dev/null)" >> "$results"
  stop_bridges "$run_signal" $bridge_pid
  record "$run_label" "$out/bridge.$run_label.log"
  echo "$run_label: $(sed -n "s/^RESULT label=[^ ]* //p" "$out/loadgen.$run_label.log" | cut -c1-150)" >&2
}

# run_pair LABEL_A LABEL_B LOADGEN_ARGS... -- BRIDGE_A -- BRIDGE_B
# Like run(), with two bridges at once: A on the generator's port "loadgen" and the UDP port
# given, B on "loadgen-b" and the next one (loadgen --pair).
run_pair() {
  label_a=$1 label_b=$2
  shift 2
  loadgen_args=""
  while [ "$1" != "--" ]; do loadgen_args="$loadgen_args $1"; shift; done
  shift
  bridge_a=$1 bridge_b=$3
  # shellcheck disable=SC2086  # loadgen_args is a list of words without spaces
  start_generator "$label_a" --pair "$label_b" $loadgen_args || return
  $bridge_a > "$out/bridge.$label_a.log" 2>&1 &
  pid_a=$!
  $bridge_b > "$out/bridge.$label_b.log" 2>&1 &
  pid_b=$!
  [ -n "${trace_file:-}" ] && trace_on
  wait $generator_pid
  [ -n "${trace_file:-}" ] && trace_off "$trace_file"
  stop_bridges TERM $pid_a $pid_b
  record "$label_a" "$out/bridge.$label_a.log" "$out/bridge.$label_b.log"
  grep '^RESULT' "$out/loadgen.$label_a.log" | sed 's/^RESULT label=//' | cut -c1-150 >&2
}

# trace_on, trace_off FILE: the kernel's tracer records every system call's entry and exit and
# every wake-up and context switch, from the bridges' start to the generator's end, into FILE.
tracing=/sys/kernel/tracing
trace_on() {
  mount -t tracefs nodev $tracing 2>/dev/null
  echo 16384 > $tracing/buffer_size_kb
  echo > $tracing/trace
  for event in raw_syscalls/sys_enter raw_syscalls/sys_exit sched/sched_switch sched/sched_wakeup; do
    echo 1 > $tracing/events/$event/enable
  done
  echo 1 > $tracing/tracing_on
}
trace_off() {
  echo 0 > $tracing/tracing_on
  echo 0 > $tracing/events/enable
  cat $tracing/trace > "$1"
}

# The bridges, MIDI -> OSC. Each subscribes itself to the generator's port "loadgen". exec, so
# that the PID run() records is the bridge's (or valgrind's, which is the same process).
aseqosc_forward() { exec "$@" "$aseqosc" run --config "$out/aseqosc.json5" --log-level warning; }
# The same with `realtime: false`: its threads at normal priority.
aseqosc_nort_forward() { exec "$@" "$aseqosc" run --config "$out/aseqosc-nort.json5" --log-level warning; }
# Real-time threads never kept on one CPU (`realtime.cpu: false`).
aseqosc_unpinned_forward() { exec "$@" "$aseqosc" run --config "$out/aseqosc-unpinned.json5" --log-level warning; }
m2o_forward() { exec "$@" m2o -m 3 -i loadgen -o $forward_port; }
bare_forward() { exec "$@" "$out/bare-forwarder" --connect loadgen:0 $forward_port; }
# OSC -> MIDI. The generator listens on its port "loadgen" and sends OSC to the bridge.
o2m_reverse() { exec "$@" o2m -m 3 -i $reverse_port -o loadgen; }
aseqosc_reverse() { exec "$@" "$aseqosc" run --config "$out/aseqosc-reverse.json5" --log-level warning; }
bare_reverse() { exec "$@" "$out/bare-forwarder" --reverse --connect loadgen:0 $reverse_port; }
# The second bridge of a paired run: the generator's second port, the next UDP port.
aseqosc_forward_b() { exec "$aseqosc" run --config "$out/aseqosc-b.json5" --log-level warning; }
bare_forward_b() { exec "$out/bare-forwarder" --connect loadgen:1 $((forward_port + 1)); }
aseqosc_reverse_b() { exec "$aseqosc" run --config "$out/aseqosc-reverse-b.json5" --log-level warning; }
bare_reverse_b() { exec "$out/bare-forwarder" --reverse --connect loadgen:1 $((reverse_port + 1)); }
# The other build of an --against run, as stream a or b: the same bridges with its binary
# (each runs in a background subshell, so the assignment stays there).
other_forward() { aseqosc=$against; aseqosc_forward; }
other_forward_b() { aseqosc=$against; aseqosc_forward_b; }
other_reverse() { aseqosc=$against; aseqosc_reverse; }
other_reverse_b() { aseqosc=$against; aseqosc_reverse_b; }

forward="aseqosc m2o bare"
# Every reverse bridge gets o2m's addresses (/*/note_on ,iii ...), which aseqosc accepts too.
reverse_bridges="aseqosc o2m bare"

uname -r > "$out/vm-kernel.txt"
nproc > "$out/vm-nproc.txt"

if [ -n "$only" ]; then
  # One bridge, one direction, callgrind only.
  callgrind=1 forward="" reverse_bridges="" only_direction=${only#*.}
  case $only_direction in m2o) forward=${only%%.*} ;; o2m) reverse=1 reverse_bridges=${only%%.*} ;; esac
fi

if [ "$trace" = 1 ]; then
  # Twice per direction, aseqosc as stream a and then as stream b; no other runs.
  rounds=0 callgrind=0
  for direction in m2o o2m; do
    if [ $direction = m2o ]; then kind=forward port=$forward_port format=""
    else kind=reverse port=$reverse_port format="--format osmid"; fi
    echo "== $direction: paired paced under the tracer" >&2
    trace_file="$out/trace.$direction.1.txt" run_pair "aseqosc.$direction.traced" "bare.$direction.traced" \
      --direction $direction $format --udp-port $port --rate 500 --count 1500 --warmup-ms 100 -- \
      aseqosc_$kind -- bare_${kind}_b
    trace_file="$out/trace.$direction.2.txt" run_pair "bare.$direction.traced.2" "aseqosc.$direction.traced.2" \
      --direction $direction $format --udp-port $port --rate 500 --count 1500 --warmup-ms 100 -- \
      bare_$kind -- aseqosc_${kind}_b
  done
fi

if [ -n "$against" ]; then
  # Each round: this build as stream a, then the other one; labels BUILD.DIRECTION.ab.ROUND.PAIR.
  for direction in $([ "$reverse" = 1 ] && echo m2o o2m || echo m2o); do
    if [ $direction = m2o ]; then kind=forward port=$forward_port format=""
    else kind=reverse port=$reverse_port format="--format osmid"; fi
    round=1
    while [ $round -le "$rounds" ]; do
      echo "== $direction: this build and $against at once, round $round of $rounds" >&2
      run_pair "aseqosc.$direction.ab.$round.1" "other.$direction.ab.$round.1" \
        --direction $direction $format --udp-port $port --rate 500 --count $paced_n --warmup-ms 100 -- \
        aseqosc_$kind -- other_${kind}_b
      run_pair "other.$direction.ab.$round.2" "aseqosc.$direction.ab.$round.2" \
        --direction $direction $format --udp-port $port --rate 500 --count $paced_n --warmup-ms 100 -- \
        other_$kind -- aseqosc_${kind}_b
      round=$((round + 1))
    done
  done
  rounds=0 callgrind=0
fi

if [ "$load" = 1 ]; then
  # Each round, every bridge paced unloaded and then with a busy loop at normal priority on
  # the VM's one CPU; labels BRIDGE.m2o.load.idle|hog.ROUND. The generator runs SCHED_FIFO 50
  # in both, so what the hog delays is the bridge, not the generator's clock readings.
  loadgen_prefix="chrt -f 50"
  round=1
  while [ $round -le "$rounds" ]; do
    # LOAD_BRIDGES and LOAD_HOG (Benchmarks/rt-hog.sh): other bridges, another hog.
    for bridge in ${LOAD_BRIDGES:-aseqosc aseqosc_nort m2o bare}; do
      signal=$(stop_signal $bridge)
      name=$(echo $bridge | tr _ -)
      echo "== load: $name, round $round of $rounds" >&2
      run "$name.m2o.load.idle.$round" "$signal" --direction m2o --udp-port $forward_port --rate 1000 \
        --count $paced_n --warmup-ms 100 -- ${bridge}_forward
      sh -c "${LOAD_HOG:-while :; do :; done}" &
      hog_pid=$!
      run "$name.m2o.load.hog.$round" "$signal" --direction m2o --udp-port $forward_port --rate 1000 \
        --count $paced_n --warmup-ms 100 -- ${bridge}_forward
      # The hog's CPU time while it ran (ticks): proof that it competed.
      echo "HOG label=$name.m2o.load.hog.$round ticks=$(awk '{ print $14 + $15 }' /proc/$hog_pid/stat)" >> "$results"
      kill $hog_pid
      wait $hog_pid 2>/dev/null
    done
    round=$((round + 1))
  done
  rounds=0 callgrind=0
fi

if [ "$bundles" = 1 ]; then
  round=1
  while [ $round -le "$rounds" ]; do
    echo "== OSC -> MIDI, chords: bundles of 4, paced (1,000 events/s) and windowed (W=$window), round $round of $rounds" >&2
    for bridge in aseqosc o2m; do
      signal=$(stop_signal $bridge)
      run "$bridge.o2m.bundles.paced.$round" "$signal" --direction o2m --format osmid --udp-port $reverse_port \
        --bundle 4 --rate 1000 --count $paced_n --warmup-ms 100 -- ${bridge}_reverse
      run "$bridge.o2m.bundles.window.$round" "$signal" --direction o2m --format osmid --udp-port $reverse_port \
        --bundle 4 --window $window --count $window_n -- ${bridge}_reverse
    done
    round=$((round + 1))
  done
  rounds=0 callgrind=0
fi

# Round 1's labels are BRIDGE.DIRECTION.MODE; later rounds append .ROUND (summarise.py takes
# the median over rounds of each same-round ratio).
round=1
while [ -z "$only" ] && [ $round -le "$rounds" ]; do
  round_suffix=""
  [ $round -gt 1 ] && round_suffix=".$round"
  echo "== MIDI -> OSC: paced (1,000 events/s) and windowed (W=$window), round $round of $rounds" >&2
  for bridge in $forward; do
    signal=$(stop_signal $bridge)
    run "$bridge.m2o.paced$round_suffix" "$signal" --direction m2o --udp-port $forward_port --rate 1000 \
      --count $paced_n --warmup-ms 100 -- ${bridge}_forward
    run "$bridge.m2o.window$round_suffix" "$signal" --direction m2o --udp-port $forward_port --window $window \
      --count $window_n -- ${bridge}_forward
  done
  if [ "$reverse" = 1 ]; then
    echo "== OSC -> MIDI: paced (1,000 events/s) and windowed (W=$window), round $round of $rounds" >&2
    for bridge in $reverse_bridges; do
      signal=$(stop_signal $bridge)
      run "$bridge.o2m.paced$round_suffix" "$signal" --direction o2m --format osmid --udp-port $reverse_port --rate 1000 \
        --count $paced_n --warmup-ms 100 -- ${bridge}_reverse
      run "$bridge.o2m.window$round_suffix" "$signal" --direction o2m --format osmid --udp-port $reverse_port \
        --window $window --count $window_n -- ${bridge}_reverse
    done
  fi
  if [ "$paired" = 1 ]; then
    # aseqosc is stream a (its events sent first of each pair) in odd rounds, b in even ones.
    for direction in $([ "$reverse" = 1 ] && echo m2o o2m || echo m2o); do
      if [ $direction = m2o ]; then kind=forward port=$forward_port format=""
      else kind=reverse port=$reverse_port format="--format osmid"; fi
      echo "== $direction: paired paced and windowed, aseqosc and bare at once, round $round of $rounds" >&2
      # Then windowed, each with its own window: what each delivers while both share the CPU.
      if [ $((round % 2)) = 1 ]; then
        run_pair "aseqosc.$direction.paired$round_suffix" "bare.$direction.paired$round_suffix" \
          --direction $direction $format --udp-port $port --rate 500 --count $paced_n --warmup-ms 100 -- \
          aseqosc_$kind -- bare_${kind}_b
        run_pair "aseqosc.$direction.pairwindow$round_suffix" "bare.$direction.pairwindow$round_suffix" \
          --direction $direction $format --udp-port $port --window $window --count $window_n -- \
          aseqosc_$kind -- bare_${kind}_b
      else
        run_pair "bare.$direction.paired$round_suffix" "aseqosc.$direction.paired$round_suffix" \
          --direction $direction $format --udp-port $port --rate 500 --count $paced_n --warmup-ms 100 -- \
          bare_$kind -- aseqosc_${kind}_b
        run_pair "bare.$direction.pairwindow$round_suffix" "aseqosc.$direction.pairwindow$round_suffix" \
          --direction $direction $format --udp-port $port --window $window --count $window_n -- \
          bare_$kind -- aseqosc_${kind}_b
      fi
    done
  fi
  round=$((round + 1))
done

if [ "$callgrind" = 1 ]; then
  echo "== callgrind: $cg_small and $cg_large events per bridge" >&2
  valgrind="valgrind --tool=callgrind --fair-sched=yes"
  directions="m2o"
  [ "$reverse" = 1 ] && directions="m2o o2m"
  [ -n "$only" ] && directions=$only_direction
  for direction in $directions; do
    if [ $direction = m2o ]; then bridges=$forward port=$forward_port suffix=forward
    else bridges=$reverse_bridges port=$reverse_port suffix=reverse; fi
    for bridge in $bridges; do
      signal=$(stop_signal $bridge)
      # Window 16 keeps up to 16 events in flight (a burst); window 1 sends the next event only
      # when the last one arrived, so the bridge is asleep before each: a keypress ("lone").
      for in_flight in $window 1; do
        name=$bridge.$direction
        [ "$in_flight" = 1 ] && name=$bridge.$direction.lone
        for n in $cg_small $cg_large; do
          label="$name.callgrind.$n"
          run "$label" "$signal" --direction $direction --format osmid --udp-port $port --window $in_flight --count $n \
            --idle-ms 30000 --settle-ms 3000 -- \
            ${bridge}_$suffix $valgrind --callgrind-out-file="$out/callgrind.$label.out"
          ir=$(grep -E '^(summary|totals):' "$out/callgrind.$label.out" 2>/dev/null | head -n 1 | awk '{print $2}')
          echo "CALLGRIND label=$name events=$n ir=${ir:-failed}" >> "$results"
        done
      done
    done
  done
fi
echo "done" >&2
