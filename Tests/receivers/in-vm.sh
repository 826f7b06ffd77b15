#!/bin/sh
# in-vm.sh OUT: the part of scripts/test-receivers that runs inside ONE scripts/alsa-vm boot.
# Starts the receivers (Pure Data, the python-osc script, oscdump standing in for sclang,
# fluidsynth), two aseqosc bridges (Config/examples/receivers/to-receivers.json5 and
# fluidsynth.json5), plays MIDI into virmidi with amidi and OSC into aseqosc with oscsend, and
# leaves every log in OUT for check.py, which decides on the host. Needs ASEQOSC, PYTHON and
# SOUNDFONT in the environment. Every wait polls for its condition, with a time limit.
set -u
out=$1
examples=Config/examples/receivers
: "${ASEQOSC:?}" "${PYTHON:?}" "${SOUNDFONT:?}"

now() { cut -d' ' -f1 /proc/uptime; }
log() { echo "in-vm [$(now)]: $*" >&2; }

# wait_until SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.1 s until it succeeds, for
# at most SECONDS by the clock (under emulation one poll can cost a good part of a second).
wait_until() {
  read -r uptime _ < /proc/uptime
  deadline=$(( ${uptime%.*} + $1 )) what=$2
  shift 2
  until "$@" 2>/dev/null; do
    read -r uptime _ < /proc/uptime
    [ "${uptime%.*}" -lt $deadline ] || { log "timed out waiting for $what"; echo "TIMEOUT $what" >> "$out/events.txt"; return 1; }
    sleep 0.1
  done
  log "$what"
}
# udp_bound PORT: a socket is bound to UDP PORT (IPv4 or IPv6; /proc/net/udp*, the port in hex).
udp_bound() { grep -qi ":$(printf '%04X' "$1") " /proc/net/udp /proc/net/udp6; }
# has FILE PATTERN: FILE has a line matching the extended regular expression PATTERN.
has() { grep -qE "$2" "$1"; }
# grown FILE BYTES: FILE is at least BYTES long.
grown() { [ "$(stat -c %s "$1")" -ge "$2" ]; }

: > "$out/events.txt"
log "start"
# fluidsynth first: it is the slowest to start. -a file writes raw 16-bit stereo samples at
# 44.1 kHz in real time; -s (a server) keeps it running without a shell on stdin.
fluidsynth -q -a file -o audio.file.name="$out/fluidsynth.raw" -o audio.file.type=raw \
  -r 44100 -R 0 -C 0 -g 1 -m alsa_seq -s -i "$SOUNDFONT" > "$out/fluidsynth.log" 2>&1 &
fluidsynth=$!
pd -nogui -noaudio -nomidi -stderr -open $examples/puredata.pd > "$out/pd.log" 2>&1 &
pd=$!
"$PYTHON" $examples/python-osc-receiver.py --port 57122 > "$out/python-osc.log" 2>&1 &
python=$!
oscdump -L 57120 > "$out/oscdump.txt" 2>&1 &   # where sclang would listen
oscdump=$!
"$ASEQOSC" run --config $examples/to-receivers.json5 --control /tmp/aseqosc-receivers.$$.1 > "$out/aseqosc.log" 2>&1 &
bridge=$!
"$ASEQOSC" run --config $examples/fluidsynth.json5 --control /tmp/aseqosc-receivers.$$.2 > "$out/aseqosc-fluidsynth.log" 2>&1 &
bridge_fluidsynth=$!

ready=1
wait_until 90 "oscdump listening" udp_bound 57120 || ready=0
wait_until 90 "Pure Data listening" udp_bound 57121 || ready=0
wait_until 90 "python-osc listening" has "$out/python-osc.log" '^listening on' || ready=0
wait_until 90 "aseqosc running" has "$out/aseqosc.log" 'running: ' || ready=0

if [ $ready = 1 ]; then
  # MIDI -> OSC: note on, note off, CC 7, pitch bend on channel 2, program change.
  amidi -p hw:0,0 -S '90 3C 64 80 3C 00 B0 07 64 E1 00 20 C0 05'
  echo "PLAYED" >> "$out/events.txt"
  log "played MIDI into hw:0,0"
  wait_until 60 "oscdump got the program change" has "$out/oscdump.txt" '/program i 5'
  wait_until 60 "Pure Data printed the program change" has "$out/pd.log" '^program: '
  wait_until 60 "python-osc printed the program change" has "$out/python-osc.log" '^program '
fi
# Each thread's name and the CPUs it may run on, for both bridges (check.py: the sending
# threads of the bridge with destinations on this machine are kept on one CPU).
cpus() { for task in /proc/$1/task/*; do echo "$2 $(cat "$task/comm") $(grep Cpus_allowed_list "$task/status" | cut -f2)"; done; }
{ cpus $bridge receivers; cpus $bridge_fluidsynth fluidsynth; echo "online $(cat /sys/devices/system/cpu/online)"; } > "$out/threads.txt"

# OSC -> MIDI into fluidsynth: the binding, silence before, the note, its samples.
if wait_until 90 "aseqosc bound to FLUID Synth" has "$out/aseqosc-fluidsynth.log" "bound to .*FLUID Synth" &&
   wait_until 60 "aseqosc listening on 57200" udp_bound 57200 &&
   wait_until 60 "fluidsynth rendering" grown "$out/fluidsynth.raw" 44100; then
  bytes_per_second=176400   # 44100 frames of 2 x 16 bits
  before=$(stat -c %s "$out/fluidsynth.raw")
  oscsend 127.0.0.1 57200 /midi/fluidsynth/1/note_on ii 69 127
  wait_until 60 "fluidsynth rendered 0.5 s of the note" grown "$out/fluidsynth.raw" $((before + bytes_per_second / 2))
  oscsend 127.0.0.1 57200 /midi/fluidsynth/1/note_off ii 69 0
  after=$(stat -c %s "$out/fluidsynth.raw")
  echo "NOTE before=$before after=$after" >> "$out/events.txt"
fi

kill -TERM $bridge $bridge_fluidsynth 2>/dev/null
wait $bridge; echo "EXIT aseqosc $?" >> "$out/events.txt"
wait $bridge_fluidsynth; echo "EXIT aseqosc-fluidsynth $?" >> "$out/events.txt"
kill -TERM $pd $python $oscdump $fluidsynth 2>/dev/null
( sleep 5; kill -KILL $pd $python $oscdump $fluidsynth 2>/dev/null ) &
wait $pd $python $oscdump $fluidsynth 2>/dev/null
log "done"
