#!/bin/sh
# in-vm.sh OUT: the part of scripts/test-page that runs inside ONE scripts/alsa-vm boot. Starts
# aseqosc on OUT/page.json5 (a copy of Tests/page/page.json5), its peers (oscdump on UDP 9000 and
# 9002, tcp-receiver.py on TCP 9001; nothing on UDP 9003 and, until asked, 9004), writes
# OUT/done/ready and then does what the host side (Tests/page/browser.py) asks: each file
# OUT/signals/NN-WHAT is one request, answered by OUT/done/NN-WHAT (the VM's uptime when it
# began and when it was done, then any output). Requests: play, release (a note on, its note
# off, into virmidi with amidi), tap (a note on and off at once, D4), stop-tcp, start-late
# (oscdump on UDP 9004, answered once it is bound), reload and page-off (a config copied over
# OUT/page.json5, then SIGHUP), status (`aseqosc status --json`), status-text (`aseqosc status`),
# curl-get URL-PATH (from this machine, loopback), finish. Needs ASEQOSC and PYTHON. Every wait
# polls its condition, for at most 300 s (a starved emulated VM is that slow); gives up 1200 s
# after it started.
set -u
out=$1
here=$(dirname "$0")
: "${ASEQOSC:?}" "${PYTHON:?}"
now() { cut -d' ' -f1 /proc/uptime; }
log() { echo "in-vm [$(now)]: $*"; }
# wait_until SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.1 s for at most SECONDS.
wait_until() {
  read -r uptime _ < /proc/uptime
  deadline=$(( ${uptime%.*} + $1 )) what=$2
  shift 2
  until "$@" 2>/dev/null; do
    read -r uptime _ < /proc/uptime
    [ "${uptime%.*}" -lt $deadline ] || { log "timed out waiting for $what"; return 1; }
    sleep 0.1
  done
  log "$what"
}
has() { grep -qE "$2" "$1"; }
udp_bound() { grep -qi ":$(printf '%04X' "$1") " /proc/net/udp /proc/net/udp6; }
tcp_listening() { grep -qi ":$(printf '%04X' "$1") 00000000:0000 0A" /proc/net/tcp; }

mkdir -p "$out/signals" "$out/done" /run/aseqosc-page
control=/run/aseqosc-page/control
cp "$here/page.json5" "$out/page.json5"
log "start"
oscdump -L 9000 > "$out/oscdump-9000.txt" 2>&1 &
dump1=$!
oscdump -L 9002 > "$out/oscdump-9002.txt" 2>&1 &
dump2=$!
"$PYTHON" "$here/tcp-receiver.py" 9001 > "$out/tcp-receiver.log" 2>&1 &
tcp=$!
wait_until 300 "oscdump on 9000" udp_bound 9000
wait_until 300 "oscdump on 9002" udp_bound 9002
wait_until 300 "the TCP receiver on 9001" tcp_listening 9001
"$ASEQOSC" run --config "$out/page.json5" --control $control > "$out/aseqosc.log" 2>&1 &
bridge=$!
if wait_until 300 "aseqosc running" has "$out/aseqosc.log" 'running: ' &&
   wait_until 300 "OSCQuery listening on 57301" tcp_listening 57301; then
  { now; ip -4 addr show dev eth0 | grep inet; } > "$out/done/ready"
else
  { now; echo "aseqosc did not start:"; tail -n 20 "$out/aseqosc.log"; } > "$out/done/failed"
fi

read -r uptime _ < /proc/uptime
deadline=$(( ${uptime%.*} + 1200 ))
finished=0
while [ $finished = 0 ]; do
  for f in "$out"/signals/*; do
    [ -e "$f" ] || continue
    request=${f##*/}
    what=${request#*-}
    arg=$(cat "$f")
    rm -f "$f"
    started=$(now)
    case "$what" in
      play) amidi -p hw:0,0 -S '90 3C 64' 2>&1 ;;
      release) amidi -p hw:0,0 -S '80 3C 00' 2>&1 ;;
      tap) amidi -p hw:0,0 -S '90 3E 64 80 3E 00' 2>&1 ;;
      stop-tcp) kill $tcp; wait $tcp ;;
      start-late)
        oscdump -L 9004 > "$out/oscdump-9004.txt" 2>&1 &
        late=$!
        wait_until 300 "oscdump on 9004" udp_bound 9004 ;;
      reload) cp "$here/page-reloaded.json5" "$out/page.json5" && kill -HUP $bridge ;;
      page-off) cp "$here/page-off.json5" "$out/page.json5" && kill -HUP $bridge ;;
      status) "$ASEQOSC" status --json --control $control 2>&1 ;;
      status-text) "$ASEQOSC" status --control $control 2>&1 ;;
      curl-get) curl -s -o /dev/null -w '%{http_code}\n' "http://127.0.0.1:57301$arg" 2>&1 ;;
      finish) finished=1 ;;
      *) echo "unknown request $what" ;;
    esac > "$out/done/.$request" 2>&1
    { echo "$started $(now)"; cat "$out/done/.$request"; } > "$out/done/$request.tmp"
    rm -f "$out/done/.$request"
    mv "$out/done/$request.tmp" "$out/done/$request"
    log "did $request"
  done
  read -r uptime _ < /proc/uptime
  [ "${uptime%.*}" -lt $deadline ] || { log "no finish from the host in 1200 s"; break; }
  sleep 0.05
done

kill $bridge 2>/dev/null
wait $bridge 2>/dev/null
log "aseqosc exited ($?)"
kill $dump1 $dump2 $tcp ${late:-} 2>/dev/null
exit 0
