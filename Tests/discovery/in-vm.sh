#!/bin/sh
# in-vm.sh OUT: the part of scripts/test-discovery that runs inside ONE scripts/alsa-vm boot.
# Makes a network of its own (a veth pair: this side 10.77.0.1, a network namespace "peer" with
# 10.77.0.2; nothing leaves the VM), starts the system D-Bus and, later, avahi-daemon, and
# checks aseqosc's DNS-SD announcement with avahi-browse (avahi-utils) here and python's
# zeroconf (its own mDNS stack) from the peer namespace, plus `aseqosc browse` and the OSCQuery
# server (oscquery-client.py: its namespace, HOST_INFO, hostile HTTP). Prints
# `ok - NAME` / `not ok - NAME` and `discovery: N passed, M failed`. Needs ASEQOSC and PYTHON
# (a python3 with zeroconf). Every wait polls for its condition, with a time limit.
set -u
out=$1
: "${ASEQOSC:?}" "${PYTHON:?}"
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }
check() {  # check NAME COMMAND...
  name=$1; shift
  if "$@" > "$out/last-check.txt" 2>&1; then ok "$name"; else not_ok "$name"; sed 's/^/    /' "$out/last-check.txt" | head -n 20; fi
}
# wait_until SECONDS COMMAND...: polls COMMAND every 0.2 s until it succeeds, for at most SECONDS.
wait_until() {
  read -r uptime _ < /proc/uptime
  deadline=$(( ${uptime%.*} + $1 ))
  shift
  until "$@" > /dev/null 2>&1; do
    read -r uptime _ < /proc/uptime
    [ "${uptime%.*}" -lt $deadline ] || return 1
    sleep 0.2
  done
}
has() { grep -qE "$2" "$1"; }
count() { grep -cE "$2" "$1" 2>/dev/null || true; }
# browse_has TYPE PATTERN: avahi-browse, resolved and terminated, lists a line matching PATTERN.
# browse_has TYPE PATTERN [PATTERN2]: avahi-browse (resolved, terminated) lists a line matching
# PATTERN, and PATTERN2 too when given.
browse_has() { timeout 20 avahi-browse -rtp "$1" 2>/dev/null | tee "$out/browse.txt" | grep -E "$2" | grep -qE "${3:-.}"; }
browse_lacks() { ! browse_has "$1" "$2"; }
start_avahi() { avahi-daemon --no-drop-root --no-chroot --no-rlimits --daemonize 2>> "$out/avahi.log"; }

# The network: a veth pair with multicast, and a namespace for the other machine.
ip link add veth0 type veth peer name veth1 && ip netns add peer && ip link set veth1 netns peer &&
  ip addr add 10.77.0.1/24 dev veth0 && ip link set veth0 up &&
  ip netns exec peer ip addr add 10.77.0.2/24 dev veth1 && ip netns exec peer ip link set veth1 up &&
  ip netns exec peer ip link set lo up || { not_ok "network set up"; echo "discovery: $passed passed, $failed failed"; exit 1; }
mkdir -p /run/dbus /run/avahi-daemon /run/aseqosc-discovery
dbus-daemon --system --fork --nopidfile || not_ok "dbus-daemon started"

cat > "$out/bridge.json5" <<'JSON'
{
  inputs: [],
  outputs: [{ name: "synth", to: "Midi Through" }],
  // The mappings of Config/examples/touchosc-both-ways.json5, for the OSCQuery namespace.
  osc: { listen: "0.0.0.0:57300", protocol: ["udp", "tcp"], allow: ["10.77.0.0/24", "127.0.0.0/8"],
         announce: "Discovery test bridge",
         mappings: [
           { address: "/1/fader{n}", args: "f", type: "control_change",
             controller: "{n}", value: { from: "{0}", in: [0, 1], out: [0, 127] } },
           { address: "/1/toggle{n}", args: "f", type: "control_change",
             controller: { from: "{n}", in: [1, 4], out: [80, 83] }, value: { from: "{0}", in: [0, 1], out: [0, 127] } },
           { address: "/2/push{n}", args: "f", type: "note_on", channel: 10,
             note: { from: "{n}", in: [1, 16], out: [36, 51] }, velocity: { from: "{0}", in: [0, 1], out: [0, 127] } },
           { address: "/3/xy", args: "ff", type: "pitch_bend", value: { from: "{0}", in: [0, 1], out: [-8192, 8191] } },
         ] },
}
JSON
control=/run/aseqosc-discovery/control

# 1. avahi-daemon not running yet: one line, and the bridge works.
check "browse without avahi-daemon exits 69 and says why" sh -c \
  "\"$ASEQOSC\" browse --timeout 2 > $out/browse-nodaemon.out 2>&1; test \$? = 69 && grep -q 'avahi-daemon is not running' $out/browse-nodaemon.out"
aseqdump -p 14:0 > "$out/aseqdump.txt" 2>&1 &
dump=$!
"$ASEQOSC" run --config "$out/bridge.json5" --control $control > "$out/bridge.log" 2>&1 &
bridge=$!
wait_until 60 has "$out/bridge.log" "running:"
check "without avahi-daemon the bridge runs and says once that it waits" sh -c \
  "grep -q 'announce: avahi-daemon is not running; Discovery test bridge is announced when it starts' $out/bridge.log && test \$(grep -c 'avahi-daemon is not running' $out/bridge.log) = 1"
check "status says the announcement waits for avahi-daemon" sh -c \
  "\"$ASEQOSC\" status --control $control | grep -q '^announce: waiting for avahi-daemon'"
echo '/synth/note_on ,iii' > /dev/null

# 2. avahi-daemon starts: announced, seen here and from the other namespace.
start_avahi
check "announced once avahi-daemon starts, OSCQuery too" wait_until 60 has "$out/bridge.log" \
  "announce: 'Discovery test bridge' as _osc._udp port 57300, _osc._tcp port 57300, _oscjson._tcp port 57301"
check "avahi-browse sees _osc._udp on 10.77.0.1:57300 with the proposal's TXT" wait_until 30 browse_has _osc._udp \
  '^=;veth0;IPv4;Discovery\\032test\\032bridge;_osc\._udp;local;[^;]*;10\.77\.0\.1;57300;.*"txtvers=1"' '"version=1\.1"'
check "avahi-browse sees _osc._tcp with framing=slip" wait_until 30 browse_has _osc._tcp \
  '^=;veth0;IPv4;Discovery\\032test\\032bridge;_osc\._tcp;local;[^;]*;10\.77\.0\.1;57300;.*"framing=slip"'
# peer-browse.py SECONDS TYPE,TYPE... NAME...: waits for each NAME (or any service, without one),
# then prints every service found with its addresses, port and TXT.
cat > "$out/peer-browse.py" <<'PY'
import sys, time
from zeroconf import ServiceBrowser, Zeroconf
found = {}
class Listener:
    def add_service(self, zc, kind, name):
        info = zc.get_service_info(kind, name, timeout=10000)
        if info:
            found[name] = info
    update_service = add_service
    def remove_service(self, zc, kind, name):
        found.pop(name, None)
zc = Zeroconf()
ServiceBrowser(zc, sys.argv[2].split(","), Listener())
deadline = time.time() + float(sys.argv[1])
want = set(sys.argv[3:])
while time.time() < deadline and not (want <= set(found) if want else found):
    time.sleep(0.2)
for name, info in sorted(found.items()):
    props = {k.decode(): (v or b"").decode() for k, v in info.properties.items()}
    print(name, info.parsed_addresses(), info.port, sorted(props.items()))
zc.close()
PY
check "python zeroconf in the other namespace resolves both services to 10.77.0.1:57300" sh -c \
  "ip netns exec peer \"$PYTHON\" $out/peer-browse.py 20 _osc._udp.local.,_osc._tcp.local. \
     'Discovery test bridge._osc._udp.local.' 'Discovery test bridge._osc._tcp.local.' > $out/zeroconf.txt 2>&1;
   cat $out/zeroconf.txt;
   grep -q \"^Discovery test bridge._osc._udp.local. \['10.77.0.1'.*\] 57300 \[('txtvers', '1'), ('version', '1.1')\]\" $out/zeroconf.txt &&
   grep -q \"^Discovery test bridge._osc._tcp.local. \['10.77.0.1'.*\] 57300 \[('framing', 'slip'), ('txtvers', '1'), ('version', '1.1')\]\" $out/zeroconf.txt"
check "status shows the announcement" sh -c \
  "\"$ASEQOSC\" status --control $control | grep -q \"^announce: announced as 'Discovery test bridge' (_osc._udp port 57300, _osc._tcp port 57300, _oscjson._tcp port 57301)\""

# 2b. OSCQuery: found, read and used from the other namespace; hostile HTTP changes nothing.
client=$(dirname "$0")/oscquery-client.py
check "the bridge serves OSCQuery on 0.0.0.0:57301 and logs its size" has "$out/bridge.log" \
  'oscquery: http://0\.0\.0\.0:57301 \(333 OSC methods\)'
check "avahi-browse sees _oscjson._tcp on 10.77.0.1:57301" wait_until 30 browse_has _oscjson._tcp \
  '^=;veth0;IPv4;Discovery\\032test\\032bridge;_oscjson\._tcp;local;[^;]*;10\.77\.0\.1;57301;'
check "zeroconf finds it; the namespace is every address the config accepts, with types and ranges" \
  ip netns exec peer "$PYTHON" "$client" namespace "Discovery test bridge" "$out"
check "curl from the other namespace reads an attribute" sh -c \
  "ip netns exec peer curl -s http://10.77.0.1:57301/midi/synth/1/note_on?RANGE | tee $out/curl-range.json |
   grep -qx '{\"RANGE\":\[{\"MAX\":127,\"MIN\":0},{\"MAX\":127,\"MIN\":0}\]}'"
check "a message to an advertised default address plays on the output" wait_until 20 has "$out/aseqdump.txt" \
  'Note on +2, note 61, velocity 99'
check "a message to an advertised mapping address plays as the mapping says" wait_until 20 has "$out/aseqdump.txt" \
  'Note on +9, note 40, velocity 127'
ip netns exec peer "$PYTHON" "$client" flood 10.77.0.1 57301 57300 60 200 "$out" > "$out/flood.txt" 2>&1 &
flood=$!
check "while one machine holds all the connections it may, another is answered" sh -c \
  "for i in \$(seq 150); do test -e $out/holding && break; sleep 0.2; done;
   test -e $out/holding && curl -s --max-time 5 'http://127.0.0.1:57301/?HOST_INFO' | grep -q '\"OSC_PORT\":57300'"
touch "$out/go"
wait $flood
flood_status=$?
cat "$out/flood.txt"
check "oversized, garbage and unknown-method requests refused, silent connections closed, server up" \
  test "$flood_status" = 0
check "every note sent during the flood played (200 note-ons)" wait_until 20 sh -c \
  "test \$(grep -cE 'Note on +0, note 70, velocity 100' $out/aseqdump.txt) = 200"
check "status counts what the server refused and closed" sh -c \
  "\"$ASEQOSC\" status --control $control | tee $out/status-oscquery.txt | grep '^oscquery:' |
   grep -E 'oscquery: http://0\.0\.0\.0:57301, [0-9]+ requests \(200: [0-9]+, 204: 1, 400: 1, 404: 1, 405: 1\)' |
   grep -qE ', (1[8-9]|[2-9][0-9]) closed unanswered'"

# 3. aseqosc browse: our bridge and another host's services, OSCQuery told apart.
avahi-publish -s "Tablet synth" _osc._udp 9100 txtvers=1 > "$out/publish-tablet.log" 2>&1 &
tablet=$!
avahi-publish -s "Tablet synth" _oscjson._tcp 8080 > "$out/publish-query.log" 2>&1 &
query=$!
wait_until 30 browse_has _oscjson._tcp 'Tablet'
check "browse lists the bridge, its OSCQuery server, the other services and theirs (table)" wait_until 60 sh -c \
  "\"$ASEQOSC\" browse --timeout 5 > $out/browse.out 2>&1; cat $out/browse.out;
   grep -qE '^Discovery test bridge +udp +[^ ]+ +10\.77\.0\.1 +57300 ' $out/browse.out &&
   grep -qE '^Discovery test bridge +tcp +[^ ]+ +10\.77\.0\.1 +57300 ' $out/browse.out &&
   grep -qE '^Discovery test bridge +http +[^ ]+ +10\.77\.0\.1 +57301 +yes$' $out/browse.out &&
   grep -qE '^Tablet synth +udp .* 9100 +yes$' $out/browse.out && grep -qE '^Tablet synth +http .* 8080 +yes$' $out/browse.out"
check "browse --json parses and carries port, protocol and TXT" wait_until 60 sh -c \
  "\"$ASEQOSC\" browse --json --timeout 5 > $out/browse.json && \"$PYTHON\" -c '
import json, sys
entries = json.load(open(sys.argv[1]))
ours = [e for e in entries if e[\"name\"] == \"Discovery test bridge\" and e[\"address\"] == \"10.77.0.1\"]
assert {e[\"protocol\"] for e in ours} == {\"udp\", \"tcp\", \"http\"}, ours
osc = [e for e in ours if e[\"protocol\"] != \"http\"]
assert all(e[\"port\"] == 57300 and \"txtvers=1\" in e[\"txt\"] for e in osc), ours
assert [e[\"port\"] for e in ours if e[\"protocol\"] == \"http\"] == [57301], ours
tablet = [e for e in entries if e[\"name\"] == \"Tablet synth\" and e[\"protocol\"] == \"udp\"]
assert tablet and tablet[0][\"oscQuery\"] is True, tablet
' $out/browse.json"
check "browse rejects a bad timeout with exit 64" sh -c "\"$ASEQOSC\" browse --timeout 0 > /dev/null 2>&1; test \$? = 64"

# 4. avahi-daemon restarts: announced again.
avahi-daemon -k 2>> "$out/avahi.log"
wait_until 30 has "$out/bridge.log" "avahi-daemon went away"
start_avahi
check "after avahi-daemon restarts the bridge announces again" wait_until 60 sh -c \
  "test \$(grep -c \"announce: 'Discovery test bridge' as\" $out/bridge.log) -ge 2"
check "avahi-browse sees it again" wait_until 30 browse_has _osc._udp 'Discovery\\032test\\032bridge;_osc\._udp;local;[^;]*;10\.77\.0\.1;57300'

# 5. A reload to a name another service has: Avahi's alternative name, logged.
avahi-publish -s "Taken name" _osc._udp 9200 > "$out/publish-taken.log" 2>&1 &
taken=$!
wait_until 30 browse_has _osc._udp 'Taken\\032name;_osc\._udp;local;[^;]*;[^;]*;9200'
sed -i 's/announce: "Discovery test bridge"/announce: "Taken name"/' "$out/bridge.json5"
"$ASEQOSC" reload --control $control > "$out/reload1.out" 2>&1
check "a name taken on the network becomes Avahi's alternative, logged" wait_until 30 has "$out/bridge.log" \
  "announce: the name 'Taken name' is taken on the network; announcing as 'Taken name #2'"
check "the alternative name is announced on the new port's record" wait_until 30 browse_has _osc._udp \
  'Taken\\032name\\032\\0352;_osc\._udp;local;[^;]*;10\.77\.0\.1;57300'
check "the old name is withdrawn" wait_until 30 browse_lacks _osc._udp 'Discovery\\032test\\032bridge'

# 6. announce: false withdraws it; the bridge stops cleanly.
sed -i 's/announce: "Taken name"/announce: false/' "$out/bridge.json5"
"$ASEQOSC" reload --control $control > "$out/reload2.out" 2>&1
check "announce: false withdraws the announcement" wait_until 30 browse_lacks _osc._udp 'Taken\\032name\\032\\0352'
check "status has no announce line then" sh -c "! \"$ASEQOSC\" status --control $control | grep -q '^announce:'"
kill -TERM $bridge
wait $bridge
check "the bridge exits 0 on SIGTERM" test $? = 0
kill $tablet $query $taken 2>/dev/null
wait_until 30 browse_lacks _osc._udp 'Taken'

# 7. A destination by service name: waits (counted) while the service is absent, then follows it
# to its address and, when it is published again on another port, there; with sync: ["appear"],
# each time it appears it is sent the controller played while it was absent.
cat > "$out/follower.json5" <<'JSON'
{
  client: "aseqosc-follower",
  inputs: [{ name: "keys", from: "Midi Through" }],
  outputs: [],
  routes: [{ from: ["keys"], destinations: [{ service: "Tablet synth", sync: ["appear"] }] }],
}
JSON
fcontrol=/run/aseqosc-discovery/follower
oscdump -L 9100 > "$out/oscdump-9100.txt" 2>&1 &
dump9100=$!
oscdump -L 9101 > "$out/oscdump-9101.txt" 2>&1 &
dump9101=$!
"$ASEQOSC" run --config "$out/follower.json5" --control $fcontrol > "$out/follower.log" 2>&1 &
follower=$!
wait_until 60 has "$out/follower.log" "running:"
"$ASEQOSC" send --to "Midi Through" on C4 100 off C4 cc 7 100 > /dev/null 2>&1
check "while the service is absent its packets are dropped and counted, and status says so" wait_until 20 sh -c \
  "\"$ASEQOSC\" status --control $fcontrol > $out/status-absent.txt;
   grep -qE \"^    -> service 'Tablet synth' \\(_osc\\._udp\\), not on the network \\(default\\): 0 packets, 0 bytes, service_absent 3; sync on appear: 0 values replayed\" $out/status-absent.txt"
avahi-publish -s "Tablet synth" _osc._udp 9100 > "$out/publish-follow1.log" 2>&1 &
publisher=$!
check "the service is found, logged with its address" wait_until 30 has "$out/follower.log" \
  "service destinations: 'Tablet synth' \\(_osc\\._udp\\) (found at|moved to) 10\\.77\\.0\\.1:9100"
check "as it appears it gets the controller played while it was absent (sync: appear)" wait_until 20 has \
  "$out/oscdump-9100.txt" '/midi/keys/1/cc ii 7 100'
"$ASEQOSC" send --to "Midi Through" on D4 100 off D4 > /dev/null 2>&1
check "what is played reaches the service's port" wait_until 20 has "$out/oscdump-9100.txt" \
  '/midi/keys/1/note_on ii 62 100'
kill $publisher
wait $publisher 2>/dev/null
avahi-publish -s "Tablet synth" _osc._udp 9101 > "$out/publish-follow2.log" 2>&1 &
publisher=$!
check "published again on another port: followed there" wait_until 30 has "$out/follower.log" \
  "service destinations: 'Tablet synth' \\(_osc\\._udp\\) (found at|moved to) 10\\.77\\.0\\.1:9101"
"$ASEQOSC" send --to "Midi Through" on E4 100 off E4 > /dev/null 2>&1
check "what is played then reaches the new port, not the old one" wait_until 20 sh -c \
  "grep -q '/midi/keys/1/note_on ii 64 100' $out/oscdump-9101.txt && ! grep -q ' 64 100' $out/oscdump-9100.txt"
check "and the controller again, at its new port" has "$out/oscdump-9101.txt" '/midi/keys/1/cc ii 7 100'
check "status shows where the service is and what was replayed" sh -c \
  "\"$ASEQOSC\" status --control $fcontrol | grep -qE \"^    -> service 'Tablet synth' \\(_osc\\._udp\\) at 10\\.77\\.0\\.1:9101 \\(default\\): [0-9]+ packets.*; sync on appear: ([2-9]|[1-9][0-9]+) values replayed\""
# A service already on the network when a reload first names it: found at once (the browser
# reported it before anything followed it).
oscdump -L 9102 > "$out/oscdump-9102.txt" 2>&1 &
dump9102=$!
avahi-publish -s "Second synth" _osc._udp 9102 > "$out/publish-second.log" 2>&1 &
second=$!
wait_until 30 browse_has _osc._udp 'Second\\032synth;_osc\._udp;local;[^;]*;10\.77\.0\.1;9102'
sed -i 's/destinations: \[{ service: "Tablet synth", sync: \["appear"\] }\]/destinations: [{ service: "Tablet synth", sync: ["appear"] }, { service: "Second synth" }]/' \
  "$out/follower.json5"
"$ASEQOSC" reload --control $fcontrol > "$out/reload-follower.out" 2>&1
check "a reload naming a service already on the network follows it at once" wait_until 30 has "$out/follower.log" \
  "service destinations: 'Second synth' \\(_osc\\._udp\\) found at 10\\.77\\.0\\.1:9102"
"$ASEQOSC" send --to "Midi Through" on F4 100 off F4 > /dev/null 2>&1
check "and what is played reaches it" wait_until 20 has "$out/oscdump-9102.txt" '/midi/keys/1/note_on ii 65 100'
kill $publisher $second
kill -TERM $follower
wait $follower
kill $dump9100 $dump9101 $dump9102 2>/dev/null

# 8. The transcripts docs/transcripts/ holds: Config/examples/touchosc-both-ways.json5 as it is,
# but for its output port (here Midi Through) and the network it allows (here the veth pair's).
sed -e 's/to: \["Virtual Raw MIDI 0-0"\]/to: ["Midi Through"]/' -e 's#"192.168.1.0/24"#"10.77.0.0/24"#' \
  -e 's/host: "192.168.1.20"/host: "10.77.0.2"/' "$(dirname "$0")/../../Config/examples/touchosc-both-ways.json5" \
  > "$out/example.json5"
"$ASEQOSC" run --config "$out/example.json5" --control /run/aseqosc-discovery/example > "$out/example.log" 2>&1 &
example=$!
check "the example config serves OSCQuery on port 8001" wait_until 60 has "$out/example.log" \
  'oscquery: http://0\.0\.0\.0:8001 \(461 OSC methods\)'
check "avahi-browse sees the example's _osc._udp and _oscjson._tcp, over IPv4 only (it listens on 0.0.0.0)" wait_until 30 sh -c \
  "timeout 20 avahi-browse -rtp _oscjson._tcp > $out/transcript-avahi-browse.txt 2>/dev/null;
   timeout 20 avahi-browse -rtp _osc._udp >> $out/transcript-avahi-browse.txt 2>/dev/null;
   grep -q '^=;veth0;IPv4;aseqosc\\\\032on\\\\032[^;]*;_oscjson\._tcp;local;[^;]*;10\.77\.0\.1;8001;' $out/transcript-avahi-browse.txt &&
   grep -q '^=;veth0;IPv4;aseqosc\\\\032on\\\\032[^;]*;_osc\._udp;local;[^;]*;10\.77\.0\.1;8000;' $out/transcript-avahi-browse.txt &&
   ! grep -q ';IPv6;' $out/transcript-avahi-browse.txt"
check "curl reads the example's namespace and HOST_INFO from the other namespace" sh -c \
  "ip netns exec peer curl -s http://10.77.0.1:8001/ | \"$PYTHON\" -m json.tool --indent 2 > $out/transcript-namespace.json &&
   ip netns exec peer curl -s 'http://10.77.0.1:8001/?HOST_INFO' | \"$PYTHON\" -m json.tool --indent 2 > $out/transcript-host-info.json &&
   grep -q '\"FULL_PATH\": \"/2/push16\"' $out/transcript-namespace.json && grep -q '\"OSC_PORT\": 8000' $out/transcript-host-info.json"
kill -TERM $example
wait $example

# 8b. The TouchOSC Bridge drop-in: announced as touchosc2midi does, _touchoscbridge._udp on
# 12101 under the host name, seen by avahi-browse here and by python zeroconf on the other side.
printf '{ touchoscBridge: true }\n' > "$out/touchosc.json5"
"$ASEQOSC" run --config "$out/touchosc.json5" --control /run/aseqosc-discovery/touchosc > "$out/touchosc.log" 2>&1 &
touchosc=$!
check "avahi-browse sees _touchoscbridge._udp on 10.77.0.1:12101, named for the host" wait_until 60 browse_has \
  _touchoscbridge._udp "^=;veth0;IPv4;$(hostname);_touchoscbridge\._udp;local;[^;]*;10\.77\.0\.1;12101;"
check "python zeroconf in the other namespace resolves it to 10.77.0.1:12101" sh -c \
  "ip netns exec peer \"$PYTHON\" $out/peer-browse.py 20 _touchoscbridge._udp.local. > $out/zeroconf-touchosc.txt 2>&1;
   cat $out/zeroconf-touchosc.txt;
   grep -q \"^$(hostname)._touchoscbridge._udp.local. \\['10.77.0.1'.*\\] 12101 \" $out/zeroconf-touchosc.txt"
kill -TERM $touchosc
wait $touchosc

# 9. Without libavahi-client and libwebsockets (each hidden under an empty file, so dlopen fails):
# the bridge says why it neither announces nor serves OSCQuery, and plays what it is sent.
# Debian 12's files: libwebsockets.so.17 is the file itself (the build's 4.1 header names it).
lib=/usr/lib/x86_64-linux-gnu
: > "$out/empty.so"
mount --bind "$out/empty.so" $lib/libavahi-client.so.3.2.9 && mount --bind "$out/empty.so" $lib/libwebsockets.so.17
sed 's/announce: false/announce: "No libraries"/' "$out/bridge.json5" > "$out/nolibs.json5"
"$ASEQOSC" run --config "$out/nolibs.json5" --control /run/aseqosc-discovery/nolibs > "$out/nolibs.log" 2>&1 &
nolibs=$!
check "without the libraries the bridge runs and says why it does not announce or serve OSCQuery" wait_until 60 sh -c \
  "grep -q 'running:' $out/nolibs.log && grep -q 'libavahi-client.so.3 cannot be loaded (apt-get install libavahi-client3)' $out/nolibs.log &&
   grep -q 'oscquery: libwebsockets.so.17 cannot be loaded (apt-get install libwebsockets17); the namespace is not served' $out/nolibs.log"
"$PYTHON" -c 'import socket,struct
m=b"/midi/synth/4/note_on\0\0\0,ii\0"+struct.pack(">ii",65,90)
socket.socket(socket.AF_INET,socket.SOCK_DGRAM).sendto(m,("127.0.0.1",57300))'
check "and plays what it is sent" wait_until 20 has "$out/aseqdump.txt" 'Note on +3, note 65, velocity 90'
kill -TERM $nolibs
wait $nolibs
umount $lib/libavahi-client.so.3.2.9 $lib/libwebsockets.so.17
kill $dump 2>/dev/null
echo "discovery: $passed passed, $failed failed"
[ "$failed" = 0 ]
