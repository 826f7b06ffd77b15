#!/usr/bin/env bash
# The aseqosc package under a real systemd, run by scripts/test-systemd inside scripts/systemd-vm
# (systemd as PID 1, the ALSA sequencer with virmidi card 0 = clients 16-19, /opt/swift hidden).
#
#   Tests/system/service-checks.sh DEB OUTDIR
#
# Installs DEB, then checks the installed service as a user's machine would run it. Prints one
# `ok - NAME` or `not ok - NAME: detail` line per check, `# ...` notes, and a last line
# `systemd: N passed, M failed`; exits 1 when a check failed. OUTDIR receives the journal,
# the oscdump captures, `timings.txt` (seconds into the run at each check) and `security-score`
# (the number `systemd-analyze security` gives).
# Every wait polls a condition with a timeout; independent waits overlap (the broken instances
# run their 20 s while the other checks go on).
set -uo pipefail
deb=${1:?usage: service-checks.sh DEB OUTDIR}
out=${2:?usage: service-checks.sh DEB OUTDIR}
mkdir -p "$out"
midi_to=hw:0,0   # virmidi 0-0, sequencer client 16
. "$(dirname "$0")/lib.sh"

conf=/etc/aseqosc/aseqosc.json5
# a config like the default one, for the instances: NAME PORT [EXTRA_DESTINATION]
write_config() {
  local extra=""
  [ -z "${4:-}" ] || extra="{ host: \"127.0.0.1\", port: $4, scheme: \"default\" },"
  cat > "$1" <<EOF
{
  client: "$2",
  inputs: [{ name: "in", from: ["*"] }],
  routes: [{ name: "to SuperCollider", from: ["in"],
             destinations: [{ host: "127.0.0.1", port: $3, scheme: "default" }, $extra] }],
}
EOF
}

note "kernel $(uname -r), $(systemctl --version | head -n 1), /opt/swift: $(ls -A /opt/swift 2>/dev/null | wc -l) entries"

# ---------------------------------------------------------------- the package
# man-db's trigger would rebuild the index of every man page on the host (over 9p, under
# emulation: 100 s of a 110 s dpkg -i); the package's own steps are what is tested here.
rm -f /var/lib/man-db/auto-update
# A container image's policy-rc.d (exit 101: start no service) comes with the host's /; a real
# machine has none, so the package's own start on install is tested.
rm -f /usr/sbin/policy-rc.d
dpkg_log=$out/dpkg.log
t_dpkg=$(now)
dpkg -i "$deb" > "$dpkg_log" 2>&1
st=$?
check "dpkg -i $(basename "$deb") succeeds" "$st" "exit $st: $(tail -n 3 "$dpkg_log" | oneline)"
note "dpkg -i took $(since "$t_dpkg")s"
systemctl daemon-reload

bin=/usr/bin/aseqosc
libs=$(ldd "$bin" 2>&1)
echo "$libs" > "$out/ldd.txt"
swiftlibs=$(echo "$libs" | grep -Eo 'lib(swift[A-Za-z_]*|Foundation[A-Za-z_]*|dispatch|BlocksRuntime)\.so[^ ]*' | sort -u | paste -sd' ')
check "the binary loads no Swift, Foundation or dispatch library (ldd)" "$([ -z "$swiftlibs" ]; echo $?)" \
  "loads $swiftlibs"
runpath=$(readelf -d "$bin" 2>&1 | grep -E 'RUNPATH|RPATH' | sed -E 's/.*\[(.*)\].*/\1/' | paste -sd' ')
check "the binary has no RUNPATH or RPATH" "$([ -z "$runpath" ]; echo $?)" "RUNPATH $runpath"
version=$("$bin" --version 2>&1); st=$?
if [ -z "$(ls -A /opt/swift 2>/dev/null)" ]; then where="without /opt/swift"; else where="(/opt/swift NOT hidden)"; fi
check "aseqosc --version works $where" "$st" "exit $st: $(echo "$version" | oneline)"
note "aseqosc --version: $(echo "$version" | head -n 1); $(stat -c %s "$bin") bytes"

# ---------------------------------------------------------------- broken instances (in the background)
# Both fail at start; they run their 20 s while the checks below go on.
echo '{ bad json' > /etc/aseqosc/broken.json5
write_config /etc/aseqosc/secret.json5 aseqosc-secret 57125
chmod 600 /etc/aseqosc/secret.json5
t_broken=$(now)
systemctl start --no-block aseqosc@broken.service aseqosc@secret.service
# Samples aseqosc@broken once it has failed (then NRestarts is final) or 20 s after its start.
( wait_for 20 systemctl is-failed -q aseqosc@broken
  echo "$(since "$t_broken") $(systemctl show -p ActiveState,Result,NRestarts aseqosc@broken | paste -sd' ')"
) > "$out/broken-at-20s" &
sampler=$!

# ---------------------------------------------------------------- the service
wait_for 10 systemctl is-active -q aseqosc
st=$?
check "dpkg -i enables and starts aseqosc.service" \
  "$([ "$st" = 0 ] && systemctl is-enabled -q aseqosc; echo $?)" \
  "$(systemctl is-enabled aseqosc 2>&1), $(systemctl is-active aseqosc 2>&1): $(grep -i 'aseqosc.service' "$dpkg_log" | oneline)"
[ "$st" = 0 ] || systemctl start aseqosc   # so that the checks below still run
wait_for 10 systemctl is-active -q aseqosc
check "aseqosc.service is active" "$?" "$(systemctl show -p ActiveState,SubState,Result aseqosc | oneline)"
status_text=$(prop aseqosc StatusText)
check "aseqosc.service has a StatusText (STATUS=)" "$([ -n "$status_text" ]; echo $?)" "StatusText is empty"
note "StatusText: $status_text"

osc_main=$out/oscdump-57120.txt
oscdump_on 57120 "$osc_main"
play_until "$osc_main" 'note_on .*60 100' 10 '90 3C 64 80 3C 00'
check "MIDI played into virmidi reaches oscdump on 57120" "$?" \
  "oscdump saw: $(head -n 5 "$osc_main" | oneline)"

# ---------------------------------------------------------------- real-time threads
# The packaged unit grants SCHED_FIFO (LimitRTPRIO=4, sched_setscheduler back in its filter) and
# memory locking (LimitMEMLOCK=infinity) to its dynamic user: the input thread runs
# FIFO at 4 (the default config has no OSC input), the others at normal priority (policy 0).
main_pid=$(prop aseqosc MainPID)
fifo_threads_check "$main_pid" "aseqosc-input/4" \
  "the unit's input thread runs SCHED_FIFO 4, the others normal (/proc/PID/task/*/sched)"
threads_line=$(aseqosc status --control /run/aseqosc/control 2>&1 | grep '^threads:')
# The default config sends to 127.0.0.1: the sending thread is kept on the VM's last CPU.
last_cpu=$(cut -d- -f2 /sys/devices/system/cpu/online)
check "aseqosc status shows the threads' policy, their CPU and the memory lock" \
  "$([ "$threads_line" = "threads: input fifo/4 on CPU $last_cpu; memory locked" ]; echo $?)" \
  "status says '$threads_line'"
allowed=$(for task in /proc/"$main_pid"/task/*; do
  echo "$(cat "$task/comm")=$(grep Cpus_allowed_list "$task/status" | cut -f2)"; done | sort | paste -sd' ')
check "the unit may keep its sending thread on one CPU (sched_setaffinity allowed; no refusal logged)" \
  "$(echo "$allowed" | grep -q "aseqosc-input=$last_cpu" &&
     ! journalctl -b -u aseqosc --no-pager -o cat | grep -q 'cannot keep'; echo $?)" \
  "threads: $allowed; $(journalctl -b -u aseqosc --no-pager -o cat | grep 'cannot keep' | oneline)"
vmlck=$(awk '/^VmLck:/ { print $2 }' /proc/"$main_pid"/status)
note "VmLck ${vmlck} kB, VmRSS $(awk '/^VmRSS:/ { print $2 }' /proc/"$main_pid"/status) kB"
refusals=$(journalctl -b -u aseqosc --no-pager -o cat 2>&1 | grep -c 'realtime:')
check "the journal has no realtime refusal" "$([ "$refusals" = 0 ]; echo $?)" \
  "$(journalctl -b -u aseqosc --no-pager -o cat | grep 'realtime:' | oneline)"
wait_for 30 in_file "$osc_main" 'note_off .*60'
check "its note-off follows" "$?" "oscdump saw: $(head -n 5 "$osc_main" | oneline)"

# ---------------------------------------------------------------- reloads
write_config "$conf" aseqosc 57120 57122
journal_mark=$(date '+%Y-%m-%d %H:%M:%S')
systemctl reload aseqosc; st=$?
check "systemctl reload with a good config exits 0" "$st" "exit $st"
wait_for 30 sh -c "aseqosc status --control /run/aseqosc/control | grep -q 127.0.0.1:57122"
check "the good reload is applied (the new destination is in aseqosc status)" "$?" \
  "$(aseqosc status --control /run/aseqosc/control 2>&1 | grep -- '->' | oneline)"
wait_for 30 sh -c "journalctl -q -u aseqosc --since '$journal_mark' | grep -q reloaded"
check "the journal says 'reloaded'" "$?" "$(journalctl -q -u aseqosc --since "$journal_mark" | tail -n 3 | oneline)"

echo '{ bad json' > "$conf"
refused_reload_checks aseqosc "$osc_main" '90 3E 64 80 3E 00' 'note_on .*62 100'
aseqosc status --control /run/aseqosc/control 2>/dev/null | grep -q 127.0.0.1:57122
check "the running config is still the last good one" "$?" "no 127.0.0.1:57122 in aseqosc status"
write_config "$conf" aseqosc 57120 57122   # a good config again, for the restarts below

# ---------------------------------------------------------------- the template instance
write_config /etc/aseqosc/studio.json5 aseqosc-studio 57121
osc_studio=$out/oscdump-57121.txt
oscdump_on 57121 "$osc_studio"
systemctl start aseqosc@studio; st=$?
wait_for 10 systemctl is-active -q aseqosc@studio
check "aseqosc@studio (/etc/aseqosc/studio.json5) is active" "$?" \
  "start exit $st, $(systemctl show -p ActiveState,Result aseqosc@studio | oneline)"
play_until "$osc_studio" 'note_on .*61 100' 10 '90 3D 64 80 3D 00'
check "aseqosc@studio sends to its own port (57121)" "$?" "oscdump on 57121 saw: $(head -n 3 "$osc_studio" | oneline)"
several=$(aseqosc status 2>&1); st=$?
echo "$several" > "$out/status-several.txt"
# names aseqosc@studio, and the main instance by its unit or its socket
# (any exit status: a list where one status was asked for may well be a usage error, 64)
check "aseqosc status (no options) lists both running instances" \
  "$(echo "$several" | grep -q studio &&
     echo "$several" | grep -Eq 'aseqosc\.service|/run/aseqosc/control'; echo $?)" \
  "exit $st: $(echo "$several" | head -n 4 | oneline)"

# ExecReload must reach its own instance, also when others run
journal_mark=$(date '+%Y-%m-%d %H:%M:%S')
systemctl reload aseqosc; st=$?
check "systemctl reload aseqosc exits 0 while aseqosc@studio runs too" "$st" \
  "exit $st: $(journalctl -q -u aseqosc --since "$journal_mark" | tail -n 2 | oneline)"
systemctl reload aseqosc@studio; st=$?
check "systemctl reload aseqosc@studio exits 0" "$st" \
  "exit $st: $(journalctl -q -u aseqosc@studio --since "$journal_mark" | tail -n 2 | oneline)"

# ---------------------------------------------------------------- watchdog
restarts=$(prop aseqosc NRestarts)
watchdog_us=$(prop aseqosc WatchdogUSec)
mainpid=$(prop aseqosc MainPID)
t_stop=$(now)
kill -STOP "$mainpid"
wait_for 40 sh -c "[ \"\$(systemctl show -p NRestarts --value aseqosc)\" -gt $restarts ]"
st=$?; took=$(since "$t_stop")
check "kill -STOP brings a watchdog restart" "$st" \
  "NRestarts still $(prop aseqosc NRestarts) after ${took}s, $(systemctl show -p ActiveState,Result aseqosc | oneline)"
lim=$(awk -v w="${watchdog_us%s}" 'BEGIN { print w + 5 }')
check "the watchdog restart is prompt (NRestarts up within WatchdogSec $watchdog_us + 5 s)" \
  "$(awk -v t="$took" -v l="$lim" 'BEGIN { exit !(t <= l) }'; echo $?)" "took ${took}s"
note "watchdog restart counted ${took}s after kill -STOP ($(systemctl show -p Result aseqosc | oneline))"
wait_for 20 systemctl is-active -q aseqosc
st=$?
check "the service is active again after the watchdog restart" "$st" "$(systemctl show -p ActiveState,Result aseqosc | oneline)"
note "active again $(since "$t_stop")s after kill -STOP"
journalctl -q -u aseqosc --since "@${t_stop%.*}" > "$out/journal-watchdog.txt"

# ---------------------------------------------------------------- held notes on stop
held_note_checks aseqosc "$osc_main" 65
note "oscdump 57120 tail: $(tail -n 2 "$osc_main" | oneline)"

one=$(aseqosc status 2>&1); st=$?
echo "$one" > "$out/status-one.txt"
check "aseqosc status (no options) finds the only running instance, aseqosc@studio" \
  "$([ "$st" = 0 ] && echo "$one" | grep -q "client 'aseqosc-studio'"; echo $?)" "exit $st: $(echo "$one" | head -n 2 | oneline)"

# ---------------------------------------------------------------- the broken instances, 20 s on
wait "$sampler"
read -r t_sample sample < "$out/broken-at-20s"
note "aseqosc@broken ${t_sample}s after its start: $sample"
echo "$sample" | grep -q 'ActiveState=failed'
check "a broken config at start ends 'failed' (within 20 s)" "$?" "$sample after ${t_sample}s"
n=$(echo "$sample" | grep -Eo 'NRestarts=[0-9]+' | cut -d= -f2)
check "a broken config at start is restarted at most twice in 20 s" "$([ "${n:-99}" -le 2 ]; echo $?)" "NRestarts=$n"
broken_log=$(journalctl -q -u aseqosc@broken)
echo "$broken_log" > "$out/journal-broken.txt"
check "the journal says why the config was refused" \
  "$(echo "$broken_log" | grep -q 'broken.json5'; echo $?)" "$(echo "$broken_log" | tail -n 3 | oneline)"
secret_log=$(journalctl -q -u aseqosc@secret)
echo "$secret_log" > "$out/journal-secret.txt"
check "a config only root can read: the error names the service's user and chmod" \
  "$(echo "$secret_log" | grep 'secret.json5' | grep -Ei "user[^a-z]*['\"]?aseqosc" | grep -q chmod; echo $?)" \
  "$(echo "$secret_log" | grep -m 1 'aseqosc\[.*secret.json5' | oneline)"
note "aseqosc@secret: $(systemctl show -p ActiveState,Result,NRestarts aseqosc@secret | oneline)"

# ---------------------------------------------------------------- DNS-SD under the unit
# The instance runs as a dynamic user in the unit's sandbox; avahi-daemon is reached over the
# system D-Bus.
if systemctl start avahi-daemon > "$out/avahi-start.txt" 2>&1; then
  cat > /etc/aseqosc/announced.json5 <<'JSON'
{
  client: "aseqosc-announced",
  inputs: [],
  outputs: [{ name: "synth", to: "Midi Through" }],
  osc: { listen: "0.0.0.0:57310", allow: ["127.0.0.0/8"], announce: "Unit test bridge" },
}
JSON
  systemctl start aseqosc@announced
  # dbus-daemon answers a dynamic user no Hello (systemd issue 22737): the unit as shipped says
  # so and keeps running; the drop-in docs/CONFIG.md gives (a fixed system user) announces.
  hinted() { journalctl -q -u aseqosc@announced | grep -q 'announce: .*runs as a dynamic user.*docs/CONFIG.md'; }
  wait_for 40 hinted
  check "aseqosc@announced as a dynamic user says why it cannot announce, and keeps running" \
    "$(hinted && systemctl is-active -q aseqosc@announced; echo $?)" "$(journalctl -q -u aseqosc@announced | tail -n 3 | oneline)"
  # OSCQuery needs no D-Bus: served under the sandbox as shipped, on the listen port + 1.
  served() { curl -s --max-time 5 'http://127.0.0.1:57311/midi/synth/1/note_on?TYPE' | grep -qx '{"TYPE":"ii"}'; }
  wait_for 40 served
  check "aseqosc@announced serves OSCQuery on port 57311 under the hardened unit" "$?" \
    "$(curl -s --max-time 5 'http://127.0.0.1:57311/?HOST_INFO' 2>&1 | oneline); $(journalctl -q -u aseqosc@announced | grep oscquery | oneline)"
  adduser --system --group --no-create-home --quiet _aseqosc || not_ok "adduser --system _aseqosc" "exit $?"
  mkdir -p /etc/systemd/system/aseqosc@announced.service.d
  printf '[Service]\nDynamicUser=no\nUser=_aseqosc\nGroup=_aseqosc\n' > /etc/systemd/system/aseqosc@announced.service.d/user.conf
  systemctl daemon-reload
  systemctl restart aseqosc@announced
  announced() { journalctl -q -u aseqosc@announced | grep -q "announce: 'Unit test bridge' as _osc._udp port 57310"; }
  wait_for 40 announced
  check "with the fixed-user drop-in aseqosc@announced announces through avahi-daemon" "$?" \
    "$(journalctl -q -u aseqosc@announced | tail -n 3 | oneline)"
  browsed() { timeout 15 avahi-browse -rtp _osc._udp 2>/dev/null | grep -q 'Unit\\032test\\032bridge;_osc._udp;local;.*;57310;'; }
  wait_for 40 browsed
  check "avahi-browse sees aseqosc@announced on port 57310" "$?" "$(timeout 15 avahi-browse -rtp _osc._udp 2>&1 | oneline)"
  queried() { timeout 15 avahi-browse -rtp _oscjson._tcp 2>/dev/null | grep -q 'Unit\\032test\\032bridge;_oscjson._tcp;local;.*;57311;'; }
  wait_for 40 queried
  check "avahi-browse sees its OSCQuery server as _oscjson._tcp on port 57311" "$?" \
    "$(timeout 15 avahi-browse -rtp _oscjson._tcp 2>&1 | oneline)"
  systemctl stop aseqosc@announced
else
  not_ok "avahi-daemon starts in the VM" "$(oneline < "$out/avahi-start.txt")"
fi

# ---------------------------------------------------------------- systemd-analyze security
systemd-analyze security --no-pager aseqosc.service > "$out/security.txt" 2>&1
score=$(grep -Eo 'Overall exposure level for aseqosc.service: [0-9.]+ [A-Z]+' "$out/security.txt" | awk '{ print $(NF-1), $NF }')
if [ -n "$score" ]; then
  echo "${score%% *}" > "$out/security-score"
  ok "systemd-analyze security aseqosc.service: $score"
else
  not_ok "systemd-analyze security aseqosc.service" "$(tail -n 2 "$out/security.txt" | oneline)"
fi

journalctl -q --no-pager -o short-monotonic -u 'aseqosc*' > "$out/journal.txt"
note "checks took $(since "$t_start")s"
echo "systemd: $passed passed, $failed failed"
[ "$failed" = 0 ]
