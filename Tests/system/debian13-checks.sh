#!/usr/bin/env bash
# The aseqosc package on Debian 13 under its own kernel and systemd, run by scripts/test-debian13
# inside scripts/systemd-vm (SYSD_VM_ROOT: a Debian 13 root of the package's architecture, its
# apt cache holding the package's dependencies; the VM has no network).
#
#   Tests/system/debian13-checks.sh DEB OUTDIR
#
# Installs DEB with `apt install` (dependencies by Debian 13's names, from the cache), then checks
# the service as a user's machine runs it: MIDI -> OSC, OSC -> MIDI, the real-time threads, a
# refused reload, `aseqosc send`, a held note's note-off at stop; then measures the footprint
# beside osmid's m2o. MIDI comes from an emulated USB MIDI keyboard (lib.sh's
# usb_midi_keyboard: the default config's "*" takes it), from virmidi (amidi, hw:0,0) where the
# kernel has it (amd64; Debian's arm64 kernel has no snd-virmidi), and from Midi Through
# (aseqsend, 14:0).
# Prints `ok - ARCH: NAME` / `not ok - ARCH: NAME: detail` lines, `# ...` notes, `footprint ...`
# lines (see below) and a last line `debian13 ARCH: N passed, M failed`; exits 1 when a check
# failed. OUTDIR receives the apt log, the journal, the captures and footprint.txt.
set -uo pipefail
deb=${1:?usage: debian13-checks.sh DEB OUTDIR}
out=${2:?usage: debian13-checks.sh DEB OUTDIR}
mkdir -p "$out"
arch=$(dpkg --print-architecture)
label=$arch   # the caller prints both boots' lines together
. "$(dirname "$0")/lib.sh"
ctl=/run/aseqosc/control
virmidi=0; [ -e /dev/snd/midiC0D0 ] && grep -q 'Virtual Raw MIDI' /proc/asound/seq/clients && virmidi=1

note "$(. /etc/os-release; echo "$PRETTY_NAME"), kernel $(uname -r) $(uname -m), $(systemctl --version | head -n 1)"
# A USB MIDI keyboard (lib.sh), there before the package comes, as one plugged in at boot; only
# with TEST_DEBIAN13_USB=1: one amd64 boot of the gadget (dummy_hcd, f_midi) under emulation
# ended in a kernel panic (slab corruption, in interrupt), which the suite cannot afford.
usb=0; [ "${TEST_DEBIAN13_USB:-0}" = 1 ] && usb_midi_keyboard && usb=1
note "sequencer clients: $(grep '^Client' /proc/asound/seq/clients | sed -E 's/Client +[0-9]+ : "([^"]*)".*/\1/' | paste -sd, )"

# ---------------------------------------------------------------- apt install
# policy-rc.d is debian-root's, for the chroot: a booted machine has none. man-db's trigger
# would index every man page under emulation.
rm -f /usr/sbin/policy-rc.d /var/lib/man-db/auto-update
t0=$(now)
DEBIAN_FRONTEND=noninteractive apt-get install -y "$deb" > "$out/apt.log" 2>&1
st=$?
check "apt install ./$(basename "$deb") succeeds offline (dependencies from the root's apt cache)" "$st" \
  "exit $st: $(tail -n 3 "$out/apt.log" | oneline)"
note "apt install took $(since "$t0")s; unpacked: $(sed -n 's/^Unpacking \([^ ]*\) .*/\1/p' "$out/apt.log" | paste -sd' ')"
if [ "$st" != 0 ]; then   # nothing below could pass
  echo "debian13 $arch: $passed passed, $failed failed"
  exit 1
fi
providers=$(dpkg-query -W -f '${Package} ${Provides}\n' libasound2t64 libwebsockets19t64 2>/dev/null | oneline)
check "the dependencies resolve to Debian 13's packages (libasound2t64, libwebsockets19t64)" \
  "$(dpkg-query -W -f '${Status}\n' libasound2t64 libwebsockets19t64 2>/dev/null | grep -c 'install ok installed' | grep -qx 2; echo $?)" \
  "installed: $providers"
missing=$(ldd /usr/bin/aseqosc 2>&1 | grep 'not found' | oneline)
check "every library the binary needs is there (ldd)" "$([ -z "$missing" ]; echo $?)" "$missing"
version=$(aseqosc --version 2>&1); st=$?
check "aseqosc --version runs" "$st" "exit $st: $(echo "$version" | oneline)"

# ---------------------------------------------------------------- the service
wait_for 20 systemctl is-active -q aseqosc
st=$?
check "apt install enables and starts aseqosc.service" \
  "$([ "$st" = 0 ] && systemctl is-enabled -q aseqosc; echo $?)" \
  "$(systemctl is-enabled aseqosc 2>&1), $(systemctl show -p ActiveState,SubState,Result aseqosc | oneline)"
status_text=$(prop aseqosc StatusText)
check "aseqosc.service has a StatusText (STATUS=)" "$([ -n "$status_text" ]; echo $?)" "StatusText is empty"
note "StatusText: $status_text"

osc_main=$out/oscdump-57120.txt
oscdump_on 57120 "$osc_main"
# The packaged default config takes every hardware port: the USB keyboard's, virmidi's.
if [ "$usb" = 1 ] || [ "${TEST_DEBIAN13_USB:-0}" = 1 ]; then
  check "a USB MIDI keyboard shows as a sequencer client (dummy_hcd, f_midi gadget, snd-usb-audio)" \
    "$([ "$usb" = 1 ]; echo $?)" "$(lsmod | grep -E 'dummy_hcd|usb_f_midi|snd_usb_audio' | oneline)"
fi
if [ "$usb" = 1 ]; then
  midi_to=hw:fmidi,0
  play_until "$osc_main" 'note_on .*59 99' 10 '90 3B 63 80 3B 00'
  check "MIDI played on the USB MIDI keyboard reaches oscdump, default config" "$?" \
    "oscdump saw: $(head -n 5 "$osc_main" | oneline); $(aseqosc status --control $ctl 2>&1 | grep -i bound | oneline)"
fi
if [ "$virmidi" = 1 ]; then
  midi_to=hw:0,0
  play_until "$osc_main" 'note_on .*60 100' 10 '90 3C 64 80 3C 00'
  check "MIDI played into virmidi (amidi -p hw:0,0) reaches oscdump, default config" "$?" \
    "oscdump saw: $(head -n 5 "$osc_main" | oneline)"
fi

# The test config: Midi Through in (a software port, which "*" leaves out), OSC in on 57130
# with its OSCQuery server on 57131, OSC -> MIDI out to aseqdump's port.
aseqdump_out=$out/aseqdump.txt
stdbuf -oL aseqdump > "$aseqdump_out" 2>&1 &
bg_pids+=($!)
cat > /etc/aseqosc/aseqosc.json5 <<'EOF'
{
  client: "aseqosc",
  inputs: [{ name: "in", from: ["*", "Midi Through"] }],
  outputs: [{ name: "synth", to: "aseqdump" }],
  osc: { listen: "127.0.0.1:57130", query: { port: 57131 } },
  routes: [{ name: "to oscdump", from: ["in"],
             destinations: [{ host: "127.0.0.1", port: 57120, scheme: "default" }] }],
}
EOF
systemctl restart aseqosc; st=$?
wait_for 20 systemctl is-active -q aseqosc
check "aseqosc.service restarts on a config with Midi Through, an OSC input and an output" \
  "$([ "$st" = 0 ] && systemctl is-active -q aseqosc; echo $?)" \
  "restart exit $st, $(systemctl show -p ActiveState,Result aseqosc | oneline): $(journalctl -q -u aseqosc -n 3 | oneline)"

# OSCQuery: the server opens libwebsockets on first use (no ldd line shows it), by the soname of
# the header the package was built against; Debian 13's is libwebsockets.so.19, whose structs
# are not 4.1's. No curl in the root: bash's /dev/tcp asks.
http_get() {  # PORT PATH: the raw HTTP answer
  timeout 5 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" &&
    printf "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" "$2" >&3 && cat <&3' _ "$1" "$2" 2>&1
}
served() { http_get 57131 '/midi/synth/1/note_on?TYPE' | grep -q '{"TYPE":"ii"}'; }
wait_for 20 served
check "OSCQuery answers on 57131 through libwebsockets19t64 (/midi/synth/1/note_on?TYPE: {\"TYPE\":\"ii\"})" "$?" \
  "$(http_get 57131 '/midi/synth/1/note_on?TYPE' | tr -d '\r' | oneline); journal: $(journalctl -q -u aseqosc | grep oscquery | tail -n 2 | oneline)"

midi_to=14:0
play_until "$osc_main" 'note_on .*62 101' 10 '90 3E 65 80 3E 00'
check "MIDI sent into Midi Through (aseqsend -p 14:0) reaches oscdump" "$?" \
  "oscdump saw: $(tail -n 5 "$osc_main" | oneline)"
wait_for 30 in_file "$osc_main" 'note_off .*62'
check "its note-off follows" "$?" "oscdump saw: $(tail -n 5 "$osc_main" | oneline)"

osc_to_midi() {  # sends a note with oscsend once a second until aseqdump shows it
  local i=0
  while [ $i -lt 10 ]; do
    oscsend 127.0.0.1 57130 /midi/synth/1/note_on ii 64 90 2>/dev/null
    wait_for 1 in_file "$aseqdump_out" 'Note on +0, note 64, velocity 90' && return 0
    i=$((i + 1))
  done
  return 1
}
osc_to_midi
check "OSC sent with oscsend to 57130 comes out at aseqdump as MIDI" "$?" \
  "aseqdump saw: $(tail -n 4 "$aseqdump_out" | oneline); $(aseqosc status --control $ctl 2>&1 | oneline)"
oscsend 127.0.0.1 57130 /midi/synth/1/note_off ii 64 0 2>/dev/null

# ---------------------------------------------------------------- real-time threads
# The unit grants SCHED_FIFO up to 4 (LimitRTPRIO) and memory locking to its dynamic user: the
# input and OSC input threads run FIFO 4, the main and control threads normal.
main_pid=$(prop aseqosc MainPID)
fifo_threads_check "$main_pid" "aseqosc-input/4 aseqosc-osc-in/4" \
  "the input and OSC threads run SCHED_FIFO 4, the others normal (/proc/PID/task/*/sched)"
json=$(aseqosc status --json --control $ctl 2>&1)
echo "$json" > "$out/status.json"
# {"name":"input","policy":"fifo","priority":4,...} for each running thread, in order
json_threads=$(echo "$json" | tr -d ' \n' | grep -o '"threads":\[[^]]*\]' | grep -o '{[^}]*}' | while read -r obj; do
  echo "$(echo "$obj" | sed -nE 's/.*"name":"([a-z]+)".*/\1/p') $(echo "$obj" | sed -nE 's/.*"policy":"([a-z]+)".*/\1/p')/$(echo "$obj" | sed -nE 's/.*"priority":([0-9]+).*/\1/p')"
done | paste -sd' ')
locked=$(echo "$json" | tr -d ' \n' | grep -o '"memoryLocked":[a-z]*')
check "aseqosc status --json: input and osc threads fifo/4, memory locked" \
  "$([ "$json_threads" = "input fifo/4 osc fifo/4" ] && [ "$locked" = '"memoryLocked":true' ]; echo $?)" \
  "threads '$json_threads', $locked"
refusals=$(journalctl -b -u aseqosc --no-pager -o cat 2>&1 | grep 'realtime:' | oneline)
check "the journal has no realtime refusal" "$([ -z "$refusals" ]; echo $?)" "$refusals"
rss_service=$(awk '/^VmRSS:/ { print $2 }' /proc/"$main_pid"/status)
note "the service: VmRSS ${rss_service} kB, VmLck $(awk '/^VmLck:/ { print $2 }' /proc/"$main_pid"/status) kB"

# ---------------------------------------------------------------- a refused reload
cp /etc/aseqosc/aseqosc.json5 "$out/good.json5"
echo '{ bad json' > /etc/aseqosc/aseqosc.json5
refused_reload_checks aseqosc "$osc_main" '90 3F 66 80 3F 00' 'note_on .*63 102'
cp "$out/good.json5" /etc/aseqosc/aseqosc.json5

# ---------------------------------------------------------------- aseqosc send
aseqosc send --to aseqdump on C5 110 off C5 > "$out/send.txt" 2>&1; st=$?
wait_for 30 in_file "$aseqdump_out" 'Note on +0, note 72, velocity 110'
check "aseqosc send --to aseqdump plays into that port (aseqdump sees note 72)" \
  "$([ "$st" = 0 ] && in_file "$aseqdump_out" 'Note on +0, note 72, velocity 110' &&
     in_file "$aseqdump_out" 'Note off +0, note 72'; echo $?)" \
  "exit $st: $(oneline < "$out/send.txt"); aseqdump: $(tail -n 3 "$aseqdump_out" | oneline)"

# ---------------------------------------------------------------- held notes on stop
held_note_checks aseqosc "$osc_main" 65

# ---------------------------------------------------------------- footprint beside m2o
# Printed as `footprint ARCH WHAT aseqosc=N m2o=N ...` lines (and into footprint.txt).
fp() { echo "footprint $arch $*" | tee -a "$out/footprint.txt"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2f", a / b }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
: > "$out/footprint.txt"
# Binaries as packaged (dh_strip'ed by Debian's tools; no .symtab section name left).
size_a=$(stat -c %s /usr/bin/aseqosc) size_m=$(stat -c %s /usr/bin/m2o)
stripped() { if grep -qa '\.symtab' "$1"; then echo no; else echo yes; fi; }
fp "size-bytes aseqosc=$size_a m2o=$size_m ratio=$(ratio "$size_a" "$size_m") stripped=$(stripped /usr/bin/aseqosc),$(stripped /usr/bin/m2o)"

# A standard MIDI file of note-ons and note-offs 25 ms apart for 200 s (500 ticks a quarter at
# 120 bpm: a tick is 1 ms), played into Midi Through by aplaymidi: the kernel's queue times the
# events, so the stimulus costs next to no CPU while a bridge starts. Denser, the forwarded
# stream itself would load the one emulated CPU and hold back what measures it.
smf=$out/notes.mid
printf '\x19\x90\x3c\x64\x19\x80\x3c\x00' > "$out/pair.bin"
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do cat "$out/pair.bin" "$out/pair.bin" > "$out/pair2.bin"; mv "$out/pair2.bin" "$out/pair.bin"; done
len=$(( $(stat -c %s "$out/pair.bin") + 4 ))
{ printf 'MThd\x00\x00\x00\x06\x00\x00\x00\x01\x01\xf4MTrk'
  printf "\\x$(printf %02x $((len >> 24 & 255)))\\x$(printf %02x $((len >> 16 & 255)))\\x$(printf %02x $((len >> 8 & 255)))\\x$(printf %02x $((len & 255)))"
  cat "$out/pair.bin"; printf '\x00\xff\x2f\x00'; } > "$smf"
rm -f "$out/pair.bin"
cat > "$out/footprint.json5" <<'EOF'
{
  client: "aseqosc-footprint",
  inputs: [{ name: "in", from: ["Midi Through"] }],
  routes: [{ name: "out", from: ["in"], destinations: [{ host: "127.0.0.1", port: 57140, scheme: "default" }] }],
}
EOF
# Pages of both binaries and their libraries read once, so that the first run does not pay
# alone for reading them through 9p.
for b in /usr/bin/aseqosc /usr/bin/m2o; do ldd "$b" | awk '/=> \// { print $3 }' | xargs cat "$b" > /dev/null; done

# The start-up runs. A bridge runs as root from a shell (the service is stopped), on a config
# that takes Midi Through and sends to 57140, where a timestamping oscdump listens (bash reads
# its lines and stamps each with $EPOCHREALTIME). The exec time is taken in the forked shell
# just before exec.
#  - exec to ready: until the bridge's subscription to Midi Through shows in
#    /proc/asound/seq/clients (read by bash itself every 5 ms: no process forked while it waits),
#    i.e. from then on a note played is forwarded; VmRSS a second later (idle), then 20 notes
#    (one aseqsend) and VmRSS once they are through.
#  - exec to the first event: aplaymidi plays note-on/note-off 25 ms apart into Midi Through
#    from before the exec; the first OSC packet out is timed (so up to 25 ms late). m2o gets one run: osmid 0.8.0 in
#    Debian 13 dies on a note that comes while it starts (amd64: SIGSEGV), and on arm64 on any
#    note (oscpack's assertion sizeof(osc::int32) == 4: its int32 is a long on aarch64).
never=$(mktemp -u /tmp/never.XXXXXX); mkfifo "$never"; exec 9<> "$never"   # `read -t` on it: a sleep without a fork
capture_on() {  # FILE: the timestamping oscdump on 57140; its pid in $dump
  : > "$1"
  bash -c 'oscdump -L 57140 2>/dev/null | while IFS= read -r line; do echo "$EPOCHREALTIME $line"; done > "$1"' _ "$1" &
  dump=$!
  wait_for 30 sh -c "ss -Hlun 'sport = :57140' | grep -q ."
}
capture_off() { pkill -P "$dump" oscdump 2>/dev/null; wait "$dump" 2>/dev/null; }
stamps=$(mktemp -d /run/aseqosc-fp.XXXXXX)
start_bridge() {  # NAME TAG: starts it in the background, its pid in $pid, exec time in $t_exec; 1 if no exec in 10 s
  # On the VM's own tmpfs: on the 9p share a stamp written by the child was at times never seen
  # here (a start-up run waited for it until the VM's timeout).
  local tfile=$stamps/exec-$1-$2.txt
  rm -f "$tfile"
  case "$1" in
    aseqosc) ( echo "$EPOCHREALTIME" > "$tfile"
               exec aseqosc run --config "$out/footprint.json5" --control /run/aseqosc-fp.control ) > "$out/$1-$2.log" 2>&1 & ;;
    m2o)     ( echo "$EPOCHREALTIME" > "$tfile"; exec m2o -m 3 -i "Midi Through Port-0" -o 57140 ) > "$out/$1-$2.log" 2>&1 & ;;
  esac
  pid=$!
  local i=0
  while [ ! -s "$tfile" ] && [ $i -lt 2000 ]; do read -t 0.005 -u 9; i=$((i + 1)); done
  t_exec=$(cat "$tfile" 2>/dev/null)
  [ -n "$t_exec" ]
}
stop_bridge() {  # NAME: SIGINT to m2o (its way out), SIGTERM to aseqosc; 5 s, then SIGKILL
  local i
  if [ "$1" = m2o ]; then kill -INT "$pid" 2>/dev/null; else kill -TERM "$pid" 2>/dev/null; fi
  for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; read -t 0.1 -u 9; done
  kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
}
ended() { kill -0 "$pid" 2>/dev/null && return 1; wait "$pid"; how="exited-$?"; }   # how: how it ended
subscribed() {  # whether a client reads from Midi Through (its port has a "Connecting To" line)
  local line in14=0
  while IFS= read -r line; do
    case "$line" in "Client  14 "*) in14=1 ;; Client*) in14=0 ;; *"Connecting To"*) [ $in14 = 0 ] || return 0 ;; esac
  done < /proc/asound/seq/clients
  return 1
}
rss_of() { awk '/^VmRSS:/ { print $2 }' /proc/"$1"/status 2>/dev/null; }
ready_run() {  # NAME RUN: prints "READY_MS RSS_IDLE_KB RSS_AFTER_KB" (a word instead of a number when it failed)
  local cap=$out/ready-$1-$2.txt ready=none idle=none after=none i=0 t
  capture_on "$cap"
  if ! start_bridge "$1" "ready-$2"; then stop_bridge "$1"; capture_off; echo "no-exec-time none none"; return; fi
  while [ $i -lt 6000 ]; do
    t=$EPOCHREALTIME
    if subscribed; then ready=$(awk -v a="$t_exec" -v b="$t" 'BEGIN { printf "%.0f", (b - a) * 1000 }'); break; fi
    kill -0 "$pid" 2>/dev/null || break
    read -t 0.005 -u 9; i=$((i + 1))
  done
  read -t 1 -u 9
  idle=$(rss_of "$pid"); idle=${idle:-none}
  aseqsend -p 14:0 "$(for i in $(seq 20); do printf '90 3C 64 80 3C 00 '; done)"
  wait_for 10 sh -c "[ \$(grep -c note_ '$cap') -ge 40 ] || ! kill -0 $pid"
  read -t 0.3 -u 9
  if ended; then after=$how; else
    after=$(rss_of "$pid"); [ "$(grep -c note_ "$cap")" -ge 40 ] || after="lost-$(grep -c note_ "$cap")-of-40"
  fi
  stop_bridge "$1"; capture_off
  echo "$ready $idle $after"
}
first_run() {  # NAME RUN: prints the ms from exec to the first OSC packet, or how it ended
  local cap=$out/first-$1-$2.txt player first=none
  capture_on "$cap"
  aplaymidi -p 14:0 "$smf" > /dev/null 2>&1 &
  player=$!
  read -t 0.5 -u 9
  if ! start_bridge "$1" "first-$2"; then
    stop_bridge "$1"; kill "$player" 2>/dev/null; wait "$player" 2>/dev/null; capture_off; echo "no-exec-time"; return
  fi
  wait_for 20 sh -c "test -s '$cap' || ! kill -0 $pid"
  # The first stamped line; NUL bytes stripped (one arm64 run's file began with a run of them, as
  # the 9p share wrote it).
  [ ! -s "$cap" ] || first=$(tr -d '\000' < "$cap" |
    awk -v t="$t_exec" '$1 ~ /^[0-9]+\.[0-9]+$/ && $1 >= t { printf "%.0f", ($1 - t) * 1000; exit }')
  [ -n "$first" ] || first=none
  [ "$first" != none ] || ! ended || first=$how
  stop_bridge "$1"; kill "$player" 2>/dev/null; wait "$player" 2>/dev/null; capture_off
  echo "$first"
}
runs=${FOOTPRINT_RUNS:-3}
: > "$out/startup-runs.txt"
for i in $(seq "$runs"); do
  for name in aseqosc m2o; do echo "ready $name $i $(ready_run $name $i)" >> "$out/startup-runs.txt"; done
  echo "first aseqosc $i $(first_run aseqosc $i)" >> "$out/startup-runs.txt"
done
echo "first m2o 1 $(first_run m2o 1)" >> "$out/startup-runs.txt"
# field KIND NAME COLUMN: the median of the numbers there, else the words found, else n/a
field() {
  local m; m=$(awk -v k="$1" -v n="$2" -v f="$3" '$1 == k && $2 == n && $f ~ /^[0-9]+$/ { print $f }' "$out/startup-runs.txt" | median)
  [ -n "$m" ] || m=$(awk -v k="$1" -v n="$2" -v f="$3" '$1 == k && $2 == n { print $f }' "$out/startup-runs.txt" | sort -u | paste -sd/)
  echo "${m:-n/a}"
}
num() { case "$1" in ''|*[!0-9.]*) echo "" ;; *) echo "$1" ;; esac; }
ready_a=$(field ready aseqosc 4) ready_m=$(field ready m2o 4)
idle_a=$(field ready aseqosc 5) idle_m=$(field ready m2o 5)
after_a=$(field ready aseqosc 6) after_m=$(field ready m2o 6)
first_a=$(field first aseqosc 4) first_m=$(field first m2o 4)
fp "vmrss-idle-kb aseqosc=$idle_a m2o=$idle_m ratio=$(ratio "$(num "$idle_a")" "$(num "$idle_m")") service=${rss_service:-n/a}"
fp "vmrss-after-20-notes-kb aseqosc=$after_a m2o=$after_m ratio=$(ratio "$(num "$after_a")" "$(num "$after_m")")"
fp "exec-to-ready-ms aseqosc=$ready_a m2o=$ready_m ratio=$(ratio "$(num "$ready_a")" "$(num "$ready_m")") runs=$runs"
fp "exec-to-first-event-ms aseqosc=$first_a m2o=$first_m runs=$runs,1"
bad=$(awk '$2 == "aseqosc" && ($4 !~ /^[0-9]+$/ || ($1 == "ready" && ($5 !~ /^[0-9]+$/ || $6 !~ /^[0-9]+$/)))' "$out/startup-runs.txt")
check "aseqosc run: ready, 20 notes forwarded and its first event timed in every start-up run" \
  "$([ -z "$bad" ]; echo $?)" "$(echo "$bad" | oneline)"

# time_ms N COMMAND...: the median wall time of N runs after one warm-up, in ms.
time_ms() {
  local n=$1 i t0; shift
  "$@" > /dev/null 2>&1 || { echo "failed"; return; }
  for i in $(seq "$n"); do
    t0=$EPOCHREALTIME; "$@" > /dev/null 2>&1
    awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f\n", (b - a) * 1000 }'
  done | median
}
# `aseqosc send` against alsa-utils' senders, the same bytes (a note-on and its note-off) into the
# same device: Midi Through by aseqsend; a raw MIDI device (virmidi's, the USB keyboard's gadget
# side, read by aseqdump so that it drains) by amidi -S, there aseqosc send goes through the
# device's sequencer client.
bytes='90 3C 64 80 3C 00'
send_line() {  # WHAT ASEQOSC_TO OTHER...: one footprint line
  local what=$1 to=$2 a b; shift 2
  a=$(time_ms 10 aseqosc send --to "$to" on C4 100 off C4)
  b=$(time_ms 10 "$@")
  fp "send-ms $what aseqosc-send=$a $(basename "$1")=$b ratio=$(ratio "$(num "$a")" "$(num "$b")")"
}
send_line midi-through 14:0 aseqsend -p 14:0 "$bytes"
[ "$virmidi" = 0 ] || send_line virmidi 16:0 amidi -p hw:0,0 -S "$bytes"
if [ "$usb" = 1 ]; then
  stdbuf -oL aseqdump -p "USB MIDI keyboard" > "$out/aseqdump-keyboard.txt" 2>&1 &
  bg_pids+=($!)
  send_line usb-keyboard f_midi amidi -p hw:fmidi,0 -S "$bytes"
fi

journalctl -q --no-pager -o short-monotonic -u 'aseqosc*' > "$out/journal.txt"
note "checks took $(since "$t_start")s"
echo "debian13 $arch: $passed passed, $failed failed"
[ "$failed" = 0 ]
