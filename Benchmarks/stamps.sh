#!/usr/bin/env bash
# stamps.sh: how late a reader's own read stamp is against the sequencer's kernel timestamp of
# the same event (Benchmarks/stamps/stamp-gap.c), reading as aseqosc's input thread does, at
# SCHED_FIFO 4 (aseqosc's default) and at normal priority, unloaded and with a CPU hog (a busy
# loop at normal priority), in ONE scripts/alsa-vm session (1 vCPU). The load generator plays
# paced events into the reader's port. This is what dating time-tagged output by the kernel's
# timestamps instead of the read stamp could gain (docs/OSC.md, "Time-tagged output").
#
#   Benchmarks/stamps.sh [EVENTS_PER_RUN]      (default 600: 400 notes read)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m .build/bench-stamps)
mkdir -p "$out"
gcc -O2 -Wall -o "$out/stamp-gap" Benchmarks/stamps/stamp-gap.c -lasound
gcc -O2 -Wall -o "$out/loadgen" Benchmarks/e2e/loadgen.c -lasound -lm
count=${1:-600}
cat > "$out/in-vm.sh" <<VM
#!/bin/sh
set -u
for load in none hog; do
  hog=""
  if [ \$load = hog ]; then sh -c 'while :; do :; done' & hog=\$!; fi
  for policy in fifo other; do
    prio=0; [ \$policy = fifo ] && prio=4
    "$out/stamp-gap" --fifo \$prio --count \$(( $count * 2 / 3 )) > "$out/gap.txt" 2>&1 &
    reader=\$!
    i=0; until grep -q ready "$out/gap.txt" 2>/dev/null || [ \$i -gt 300 ]; do sleep 0.1; i=\$((i+1)); done
    client=\$(aconnect -l | sed -n "s/^client \([0-9]*\): 'stamp-gap'.*/\1/p")
    "$out/loadgen" --connect "\$client:0" --rate 200 --count $count --idle-ms 300 --settle-ms 200 > /dev/null 2>&1
    wait \$reader
    echo "load=\$load policy=\$policy \$(grep GAP "$out/gap.txt")"
  done
  [ -n "\$hog" ] && kill \$hog
done
VM
chmod +x "$out/in-vm.sh"
ALSA_VM_QUIET=1 ALSA_VM_MODULES="snd-hrtimer ${ALSA_VM_MODULES:-}" scripts/alsa-vm -- "$out/in-vm.sh" 2>&1 | grep '^load='
