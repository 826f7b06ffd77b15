#!/bin/sh
# Benchmarks/idle.sh: what an idle daemon costs the machine, aseqosc beside osmid's m2o and o2m,
# in one run inside the ALSA VM (issue 20, "Idle means asleep"):
#
#   flock /tmp/aseqosc-build.lock scripts/alsa-vm -- sh Benchmarks/idle.sh [SECONDS]
#
# For each daemon, idle for SECONDS (3): local timer interrupts a second over the whole VM
# (/proc/interrupts, LOC), the daemon's context switches a second (voluntary and not, every
# thread: /proc/PID/task/*/status) and its RssAnon. aseqosc is measured again after one bundle
# time-tagged 1 s ahead has played (python-osc sends it), which is when its ALSA queue used to
# keep running; then with its OSCQuery server and status page, idle, with a page watching, and
# after it left. Needs a release build (.build/release/aseqosc), m2o and o2m (osmid), python3
# with python-osc and websockets, curl.
set -eu
seconds=${1:-3}
bin=${ASEQOSC:-.build/release/aseqosc}
dir=$(mktemp -d)
loc() { awk '/^ *LOC:/ { n = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i; print n }' /proc/interrupts; }
switches() {
  cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ { n += $2 } END { print n + 0 }'
}
anon() { awk '/RssAnon/ { print $2 " kB" }' /proc/"$1"/status; }
queue_state() { awk '/aseqosc osc/ { f = 1 } f && /timer state/ { print $NF; exit }' /proc/asound/seq/queues; }
measure() {  # NAME PID
  l0=$(loc); s0=$(switches "$2"); sleep "$seconds"; l1=$(loc); s1=$(switches "$2")
  printf '%-34s %8s %8s %10s\n' "$1" "$(( (l1 - l0) / seconds ))" "$(( (s1 - s0) / seconds ))" "$(anon "$2")"
}
printf '%-34s %8s %8s %10s\n' "idle for ${seconds} s" "timer/s" "ctxsw/s" "RssAnon"
l0=$(loc); sleep "$seconds"; l1=$(loc)
printf '%-34s %8s %8s %10s\n' "nothing running" "$(( (l1 - l0) / seconds ))" "-" "-"

m2o -o 57999 >/dev/null 2>&1 & pid=$!; sleep 1.5; measure "m2o -o 57999" $pid; kill $pid; wait $pid 2>/dev/null || true
o2m -i 57998 -o "Midi Through Port-0" >/dev/null 2>&1 & pid=$!; sleep 1.5; measure "o2m -i 57998 -o 'Midi Through'" $pid
kill $pid; wait $pid 2>/dev/null || true

cat > "$dir/idle.json5" <<CONF
{ outputs: [{ name: "thru", to: "Midi Through" }], osc: { listen: "127.0.0.1:57997" } }
CONF
RUNTIME_DIRECTORY=$dir "$bin" run --config "$dir/idle.json5" 2>"$dir/log" & pid=$!
sleep 2
measure "aseqosc, before any bundle" $pid
python3 - <<'PY'
import time
from pythonosc import udp_client
from pythonosc.osc_bundle_builder import OscBundleBuilder
from pythonosc.osc_message_builder import OscMessageBuilder
client = udp_client.SimpleUDPClient("127.0.0.1", 57997)
bundle = OscBundleBuilder(time.time() + 1)
message = OscMessageBuilder("/midi/thru/1/note_on"); message.add_arg(60); message.add_arg(100)
bundle.add_content(message.build())
client.send(bundle.build())
PY
sleep 0.3
echo "queue while the bundle waits: $(queue_state)"
sleep 1.5
echo "queue after it played: $(queue_state)"
measure "aseqosc, after a bundle played" $pid
kill $pid; wait $pid 2>/dev/null || true

# The OSCQuery server (libwebsockets) and the status page with actions, nobody connected; then
# one page watching (its updates every 10 ms are the cost of watching, while it watches).
cat > "$dir/query.json5" <<CONF
{ outputs: [{ name: "thru", to: "Midi Through" }],
  osc: { listen: "127.0.0.1:57997", query: { port: 57996, actions: ["reload", "panic", "sync"] } } }
CONF
RUNTIME_DIRECTORY=$dir "$bin" run --config "$dir/query.json5" 2>"$dir/log" & pid=$!
sleep 2
curl -s -o /dev/null http://127.0.0.1:57996/ || true
sleep 0.5
measure "aseqosc, OSCQuery and the page" $pid
# pip's python (often pyenv's, which the VM shares with the host) has websockets; Debian's may not.
python=$(for p in python3 /usr/local/bin/python3 /root/.pyenv/versions/*/bin/python3; do
  "$p" -c 'import websockets.sync.client' 2>/dev/null && { echo "$p"; break; }; done)
[ -n "$python" ] || { echo "idle.sh: no python3 with websockets (python3 -m pip install websockets)" >&2; exit 69; }
"$python" - <<'PY' &
import json, time
from websockets.sync.client import connect
with connect("ws://127.0.0.1:57996/") as ws:
    ws.send(json.dumps({"COMMAND": "STATUS"})); ws.send(json.dumps({"COMMAND": "MONITOR"}))
    print("watching", flush=True)
    end = time.time() + 6
    frames = 0
    while time.time() < end:
        try:
            ws.recv(timeout=0.5)
            frames += 1
        except TimeoutError: pass
    print(f"the page got {frames} frames in 6 s", flush=True)
PY
watcher=$!
sleep 1.5
measure "aseqosc, one page watching" $pid
wait $watcher 2>/dev/null || true
sleep 1
measure "aseqosc, after the page left" $pid
kill $pid; wait $pid 2>/dev/null || true
rm -rf "$dir"
