# Sourced by the checks that run inside scripts/systemd-vm (service-checks.sh, debian13-checks.sh):
# the `ok - NAME` / `not ok - NAME: detail` lines and their counts, polling waits, peer tools in
# the background, and the checks both make of an installed aseqosc.service.
# The caller sets `out` (its log folder) before sourcing, and may set `label` (put before each
# check's name); it prints its own summary line.
export SYSTEMD_PAGER= SYSTEMD_COLORS=0 LC_ALL=C.UTF-8
t_start=$(date +%s.%N)

passed=0 failed=0
ok()     { echo "ok - ${label:+$label: }$1"; passed=$((passed + 1)); echo "$(since "$t_start") ok $1" >> "$out/timings.txt"; }
not_ok() { echo "not ok - ${label:+$label: }$1: $2"; failed=$((failed + 1)); echo "$(since "$t_start") not ok $1" >> "$out/timings.txt"; }
check()  { if [ "$2" = 0 ]; then ok "$1"; else not_ok "$1" "$3"; fi; }   # NAME STATUS DETAIL
note()   { echo "# $*"; }
now()    { date +%s.%N; }
since()  { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
oneline() { tr '\n' ' ' | sed -E 's/ +/ /g; s/ $//' | cut -c1-300; }

# wait_for SECONDS COMMAND...: runs COMMAND every 0.3 s (each systemctl costs CPU under
# emulation) until it succeeds (0) or time is up (1).
wait_for() {
  local limit=$1; shift
  local end; end=$(awk -v n="$(now)" -v l="$limit" 'BEGIN { printf "%.2f", n + l }')
  while :; do
    "$@" >/dev/null 2>&1 && return 0
    awk -v n="$(now)" -v e="$end" 'BEGIN { exit !(n >= e) }' && return 1
    sleep 0.3
  done
}
prop() { systemctl show -p "$2" --value "$1"; }   # UNIT PROPERTY
in_file() { grep -Eq -- "$2" "$1"; }              # FILE REGEX

# Where play sends MIDI bytes: a raw MIDI device (hw:C,D, with amidi: virmidi 0-0 is seq client
# 16) or a sequencer port (C:P or a name, with aseqsend: Midi Through is 14:0).
midi_to=${midi_to:-hw:0,0}
play() {   # HEX: the bytes, e.g. '90 3C 64 80 3C 00'
  case "$midi_to" in
    hw:*) amidi -p "$midi_to" -S "$1" ;;
    *)    aseqsend -p "$midi_to" "$1" ;;
  esac
}
# play_until FILE REGEX SECONDS HEX: plays HEX once a second until FILE (an oscdump capture) has
# a line matching REGEX; the first bytes may reach a bridge that has not bound the port yet.
play_until() {
  local file=$1 re=$2 limit=$3 hex=$4 i=0
  while [ "$i" -lt "$limit" ]; do
    play "$hex" 2>/dev/null
    wait_for 1 in_file "$file" "$re" && return 0
    i=$((i + 1))
  done
  return 1
}

bg_pids=()
oscdump_on() {   # PORT FILE: oscdump in the background, once it listens
  : > "$2"
  oscdump -L "$1" > "$2" 2>&1 &
  bg_pids+=($!)
  wait_for 30 sh -c "ss -Hlun 'sport = :$1' | grep -q ." || note "oscdump on $1 is not listening"
}
cleanup() { local p; for p in ${bg_pids[@]+"${bg_pids[@]}"}; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

# thread_schedules PID: one line per thread, "NAME POLICY PRIORITY" (/proc/PID/task/*/sched:
# policy 1 is SCHED_FIFO, 0 normal; a FIFO thread's prio is 99 - its rtprio), sorted.
thread_schedules() {
  local task
  for task in /proc/"$1"/task/*; do
    printf '%s %s %s\n' "$(cat "$task/comm")" "$(awk -F: '/^policy/ { gsub(/ /, "", $2); print $2 }' "$task/sched")" \
      "$(awk -F: '/^prio / { gsub(/ /, "", $2); print $2 }' "$task/sched")"
  done | sort
}
fifo_threads()   { echo "$1" | awk '$2 == 1 { print $1 "/" 99 - $3 }' | sort | paste -sd' '; }  # SCHEDULES
normal_threads() { echo "$1" | awk '$2 != 1 { print $1 }' | sort -u | paste -sd' '; }         # SCHEDULES

# fifo_threads_check PID FIFO NAME: PID's threads (kept in $out/threads.txt) are FIFO exactly
# as listed ("aseqosc-input/4 aseqosc-osc-in/4", sorted), the control thread among the others at
# normal priority: one check called NAME.
fifo_threads_check() {
  local threads fifo others
  threads=$(thread_schedules "$1")
  echo "$threads" > "$out/threads.txt"
  fifo=$(fifo_threads "$threads")
  others=$(normal_threads "$threads")
  check "$3" "$([ "$fifo" = "$2" ] && echo "$others" | grep -qw aseqosc-control; echo $?)" \
    "FIFO: '$fifo'; normal: '$others'"
}

# refused_reload_checks UNIT CAPTURE HEX REGEX: with a broken config in place (the caller wrote
# it), `systemctl reload UNIT` exits non-zero, `systemctl status` says why, the same main
# process stays active, and MIDI (HEX, played until CAPTURE has REGEX) still reaches oscdump.
refused_reload_checks() {
  local unit=$1 capture=$2 hex=$3 re=$4 pid_before mark st sysstatus
  pid_before=$(prop "$unit" MainPID)
  mark=$(date '+%Y-%m-%d %H:%M:%S')
  systemctl reload "$unit" > "$out/reload-refused.txt" 2>&1; st=$?
  check "systemctl reload with a broken config exits non-zero" "$([ "$st" != 0 ]; echo $?)" "exit 0"
  wait_for 30 sh -c "journalctl -q -u '$unit' --since '$mark' | grep -Eqi 'refused|error'"
  sysstatus=$(systemctl status --no-pager -n 20 "$unit" 2>&1)
  echo "$sysstatus" > "$out/status-after-broken-reload.txt"
  check "systemctl status shows why the reload was refused" \
    "$(echo "$sysstatus" | grep -Eqi 'refused|not valid|invalid|expected'; echo $?)" "$(echo "$sysstatus" | tail -n 3 | oneline)"
  check "the service stays active on its old config after the refused reload" \
    "$([ "$(prop "$unit" ActiveState)" = active ] && [ "$(prop "$unit" MainPID)" = "$pid_before" ]; echo $?)" \
    "$(systemctl show -p ActiveState,MainPID "$unit" | oneline), was MainPID=$pid_before"
  play_until "$capture" "$re" 5 "$hex"
  check "MIDI still reaches oscdump after the refused reload" "$?" "no '$re' in $(tail -n 3 "$capture" | oneline)"
}

# held_note_checks UNIT CAPTURE NOTE: a note-on of NOTE (0-127) reaches oscdump, then
# `systemctl stop UNIT` sends its note-off.
held_note_checks() {
  local unit=$1 capture=$2 note=$3
  play_until "$capture" "note_on .*$note 100" 10 "90 $(printf %02X "$note") 64"
  check "a held note reaches oscdump" "$?" "no note $note in $(tail -n 3 "$capture" | oneline)"
  systemctl stop "$unit"
  wait_for 30 in_file "$capture" "note_off .*$note"
  check "systemctl stop sends the held note's note-off" "$?" "oscdump saw: $(tail -n 3 "$capture" | oneline)"
}

# usb_midi_keyboard: a USB MIDI keyboard inside the VM. dummy_hcd is a USB host controller and a
# device controller wired together; a configfs gadget with the MIDI function (f_midi) plugs into
# it, and snd-usb-audio takes it as it takes any class-compliant keyboard: sequencer client
# "USB MIDI keyboard" (a hardware port, which "*" binds). What is written to the gadget's own
# raw MIDI device (card "fmidi": amidi -p hw:fmidi,0, or its sequencer client "f_midi") comes out
# of the keyboard. Returns 0 once the keyboard's client shows, 1 when the kernel lacks a part.
usb_midi_keyboard() {
  local g=/sys/kernel/config/usb_gadget/keyboard i
  modprobe -a dummy_hcd usb_f_midi snd-usb-audio 2>/dev/null || return 1
  mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || return 1
  mkdir -p "$g" "$g/strings/0x409" "$g/configs/c.1" "$g/functions/midi.usb0" || return 1
  echo 0x1d6b > "$g/idVendor"; echo 0x0104 > "$g/idProduct"   # the Linux Foundation's multifunction gadget
  echo aseqosc > "$g/strings/0x409/manufacturer"; echo "USB MIDI keyboard" > "$g/strings/0x409/product"
  ln -s "$g/functions/midi.usb0" "$g/configs/c.1/"
  ls /sys/class/udc | head -n 1 > "$g/UDC" || return 1
  wait_for 20 grep -q '"USB MIDI keyboard"' /proc/asound/seq/clients
}
