#!/usr/bin/env bash
# footprint.sh: aseqosc's footprint side by side with osmid's m2o and the bare C forwarder
# (Benchmarks/e2e/bare-forwarder.c), measured in ONE scripts/alsa-vm boot (issue 18's goals):
#
#   Benchmarks/footprint.sh [--no-append] [--runs N] [ASEQOSC]
#
#   ASEQOSC      the binary to measure (default .build/static/release/aseqosc if it exists, else
#                .build/release/aseqosc)
#   --runs N     start-up runs per bridge (default 5; the tables give medians)
#   --no-append  print the tables only; by default, with the date and commit, they replace the
#                "Footprint" section of BENCHMARKS.md and are appended to docs/benchmark-history.md
#
# Measured, per bridge (aseqosc on Config/aseqosc.json5: every hardware source, default scheme to
# 127.0.0.1:57120; `m2o -m 3`: every input, to 57120; `bare-forwarder --connect 16:0 57120`):
# - the stripped binary (strip on a copy) and the shared libraries it loads besides libc, libm,
#   libstdc++, libgcc_s and libasound (ldd);
# - exec to the first forwarded event: a probe (C, built here) binds UDP 57120, takes the time,
#   forks and execs the bridge, and writes a note to virmidi's raw side (/dev/snd/midiC0D0, the
#   sequencer's 16:0) every 2 ms until the first datagram arrives;
# - VmRSS (/proc/PID/status) once that event has come and the bridge is quiet, and again after
#   100 more events (50 note-on/note-off pairs, 2 ms apart), all received;
# - per call, median of 20 after one warm-up: `aseqosc send --to 16:0 on C4 100 off C4`,
#   `amidi -p hw:0,0 -S '90 3C 64 80 3C 00'` (the same bytes), `aseqosc --version`.
# Every binary is copied to the VM's RAM first, so none is read through the 9p share during a run.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = --in-vm ]; then
  # ---------------------------------------------------------------- in the VM
  out=$2 runs=$3
  bin=/tmp/footprint
  mkdir -p $bin
  cp "$out/aseqosc" "$out/bare-forwarder" "$out/probe" /usr/bin/m2o $bin/
  results=$out/results.txt
  : > "$results"
  uname -r > "$out/vm-kernel.txt"
  # The libraries' pages come from the host through 9p on first use: read every binary's once,
  # so the first run of each bridge is not the only one to pay for it (m2o --version would not
  # do: it prints the version and then runs as a bridge).
  for b in $bin/aseqosc $bin/m2o $bin/bare-forwarder "$(command -v amidi)"; do
    ldd "$b" | awk '/=> \// { print $3 }' | xargs cat > /dev/null
  done
  i=1
  while [ $i -le "$runs" ]; do
    # The order turns each round, so no bridge always follows the same one.
    case $((i % 3)) in
      1) order="aseqosc m2o bare" ;; 2) order="m2o bare aseqosc" ;; 0) order="bare aseqosc m2o" ;;
    esac
    for bridge in $order; do
      case $bridge in
        aseqosc) set -- TERM -- $bin/aseqosc run --config Config/aseqosc.json5 --control /tmp/footprint.control ;;
        # m2o takes every input present at its start (it crashes when a client appears later:
        # nothing else starts while it runs).
        m2o) set -- INT -- $bin/m2o -m 3 -o 57120 ;;
        bare) set -- TERM -- $bin/bare-forwarder --connect 16:0 57120 ;;
      esac
      line=$(timeout 90 $bin/probe first 57120 /dev/snd/midiC0D0 "$out/$bridge.$i.log" "$@")
      echo "RESULT bridge=$bridge run=$i $line" >> "$results"
      echo "$bridge run $i: $line" >&2
    done
    i=$((i + 1))
  done
  for what in send amidi version; do
    case $what in
      send) set -- $bin/aseqosc send --to 16:0 on C4 100 off C4 ;;
      amidi) set -- amidi -p hw:0,0 -S '90 3C 64 80 3C 00' ;;
      version) set -- $bin/aseqosc --version ;;
    esac
    line=$(timeout 120 $bin/probe time 20 "$@")
    echo "CALL what=$what $line" >> "$results"
    echo "$what: $line" >&2
  done
  exit 0
fi

# -------------------------------------------------------------------- on the host
append=1 runs=5 aseqosc=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-append) append=0; shift ;;
    --runs) case "${2:-}" in [1-9]|[1-9][0-9]) runs=$2; shift 2 ;; *) echo "footprint.sh: --runs takes 1-99" >&2; exit 64 ;; esac ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    -*) echo "footprint.sh: unknown option $1 (try --help)" >&2; exit 64 ;;
    *) aseqosc=$1; shift ;;
  esac
done
if [ -z "$aseqosc" ]; then
  if [ -x .build/static/release/aseqosc ]; then aseqosc=.build/static/release/aseqosc; else aseqosc=.build/release/aseqosc; fi
fi
[ -x "$aseqosc" ] || { echo "footprint.sh: no aseqosc binary at $aseqosc (swift build -c release)" >&2; exit 69; }
command -v m2o > /dev/null || { echo "footprint.sh: m2o is not installed (apt-get install osmid)" >&2; exit 69; }
command -v amidi > /dev/null || { echo "footprint.sh: amidi is not installed (apt-get install alsa-utils)" >&2; exit 69; }

out=.build/footprint
rm -rf "$out"
mkdir -p "$out"
cp "$aseqosc" "$out/aseqosc"   # a rebuild while this runs changes nothing
gcc -O2 -Wall -o "$out/bare-forwarder" Benchmarks/e2e/bare-forwarder.c -lasound

cat > "$out/probe.c" <<'C'
/* probe first UDP_PORT RAWMIDI LOG SIGNAL -- BRIDGE...: exec to first forwarded event, VmRSS.
 * probe time N -- COMMAND...: the median time of N runs of COMMAND (after one warm-up). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
static long rss_kb(pid_t pid) {
    char path[64], line[256];
    long kb = -1;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld", &kb) == 1) break;
    fclose(f);
    return kb;
}
static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static void fail(const char *what) { printf("failed=%s:%s\n", what, strerror(errno)); exit(1); }
static pid_t spawn(char **argv, const char *log) {
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) { dup2(fd, 1); dup2(fd, 2); }
        execvp(argv[0], argv);
        _exit(127);
    }
    return pid;
}
/* Waits for a datagram for up to ms milliseconds; 1 if one was read. */
static int receive(int udp, int ms) {
    struct pollfd p = {.fd = udp, .events = POLLIN};
    char buffer[2048];
    if (poll(&p, 1, ms) <= 0) return 0;
    return recv(udp, buffer, sizeof buffer, 0) > 0;
}
static void stop(pid_t pid, int signal) {
    kill(pid, signal);
    for (int i = 0; i < 500; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid) return;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static int first(int argc, char **argv) {
    if (argc < 8 || strcmp(argv[6], "--") != 0) { fprintf(stderr, "usage: probe first PORT RAWMIDI LOG SIGNAL -- BRIDGE...\n"); return 64; }
    int port = atoi(argv[2]);
    int signal = strcmp(argv[5], "INT") == 0 ? SIGINT : SIGTERM;
    int udp = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (udp < 0 || bind(udp, (struct sockaddr *)&address, sizeof address) < 0) fail("bind");
    int midi = open(argv[3], O_WRONLY | O_NONBLOCK);
    if (midi < 0) fail("open rawmidi");
    static const unsigned char on[] = {0x90, 0x3C, 0x64}, off[] = {0x80, 0x3C, 0x00};

    double t0 = now();
    pid_t pid = spawn(argv + 7, argv[4]);
    double first_ms = -1;
    for (int n = 0; now() - t0 < 30; n++) {
        (void)!write(midi, n % 2 ? off : on, 3);
        if (receive(udp, 2)) { first_ms = (now() - t0) * 1000; break; }
        if (waitpid(pid, NULL, WNOHANG) == pid) { printf("failed=exited-before-first-event\n"); return 1; }
    }
    if (first_ms < 0) { stop(pid, signal); printf("failed=no-event-in-30s\n"); return 1; }
    while (receive(udp, 300)) {}               /* the notes written before the first arrived */
    usleep(200000);
    long rss_start = rss_kb(pid);

    int sent = 0, received = 0;
    double last = now();
    while (sent < 100) {
        (void)!write(midi, sent % 2 ? off : on, 3);
        sent++;
        struct timespec gap = {0, 2000000};
        nanosleep(&gap, NULL);
        while (receive(udp, 0)) received++;
    }
    for (last = now(); received < 100 && now() - last < 5;)
        if (receive(udp, 100)) { received++; last = now(); }
    usleep(200000);
    long rss_after = rss_kb(pid);
    stop(pid, signal);
    printf("first_ms=%.1f rss_start_kb=%ld rss_after_kb=%ld events=%d\n", first_ms, rss_start, rss_after, received);
    return 0;
}

static int timed(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: probe time N COMMAND...\n"); return 64; }
    int n = atoi(argv[2]);
    double *times = calloc(n, sizeof *times);
    for (int i = -1; i < n; i++) {             /* run -1: the warm-up */
        double t0 = now();
        pid_t pid = spawn(argv + 3, "/dev/null");
        int status;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) { printf("failed=exit-status-%d\n", WEXITSTATUS(status)); return 1; }
        if (i >= 0) times[i] = (now() - t0) * 1000;
    }
    qsort(times, n, sizeof *times, by_value);
    double median = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
    printf("median_ms=%.1f min_ms=%.1f max_ms=%.1f runs=%d\n", median, times[0], times[n - 1], n);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "first") == 0) return first(argc, argv);
    if (argc > 1 && strcmp(argv[1], "time") == 0) return timed(argc, argv);
    fprintf(stderr, "usage: probe first ... | probe time N COMMAND...\n");
    return 64;
}
C
gcc -O2 -Wall -o "$out/probe" "$out/probe.c"

# Sizes on the host: each binary stripped (a copy), and the shared libraries it brings.
sizes() {  # NAME BINARY
  strip -o "$out/$1.stripped" "$2"
  local libs=0 lib
  for lib in $(ldd "$2" | awk '/=> \// { print $3 }'); do
    case "${lib##*/}" in libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|libasound.so*|ld-linux*) continue ;; esac
    libs=$((libs + $(stat -L -c %s "$lib")))
  done
  echo "SIZE bridge=$1 stripped=$(stat -c %s "$out/$1.stripped") libraries=$libs" >> "$out/sizes.txt"
}
: > "$out/sizes.txt"
sizes aseqosc "$out/aseqosc"
sizes m2o /usr/bin/m2o
sizes bare "$out/bare-forwarder"

echo "== runs (VM)" >&2
ALSA_VM_TIMEOUT=${ALSA_VM_TIMEOUT:-900} scripts/alsa-vm -- "$0" --in-vm "$out" "$runs"

commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources || echo '+changes')
python3 - "$out" "$aseqosc" "$commit" "$(cat "$out/vm-kernel.txt")" > "$out/table.md" <<'PY'
import re, statistics, sys, datetime
out, binary, commit, kernel = sys.argv[1:5]
def fields(line):
    return dict(re.findall(r"(\w+)=(\S+)", line))
sizes = {f["bridge"]: f for f in map(fields, open(f"{out}/sizes.txt")) if f}
runs = {}
calls = {}
for line in open(f"{out}/results.txt"):
    f = fields(line)
    if line.startswith("RESULT"):
        runs.setdefault(f["bridge"], []).append(f)
    elif line.startswith("CALL"):
        calls[f["what"]] = f
def median(bridge, key):
    values = [float(r[key]) for r in runs.get(bridge, []) if key in r]
    return statistics.median(values) if values else None
def failures(bridge):
    return sum(1 for r in runs.get(bridge, []) if "failed" in r)
names = ["aseqosc", "m2o", "bare"]
def mb(n): return f"{int(n) / 1e6:.2f} MB" if int(n) >= 1e6 else f"{int(n) / 1e3:.0f} kB"
def mib(kb): return "n/a" if kb is None else f"{kb / 1024:.1f} MiB"
def ms(v): return "n/a" if v is None else f"{v:.0f} ms"
def ratio(a, b): return "n/a" if a is None or b in (None, 0) else f"{a / b:.2f}x"
def met(ok): return "**yes**" if ok else "**no**"

stripped = {b: int(sizes[b]["stripped"]) for b in names}
libraries = {b: int(sizes[b]["libraries"]) for b in names}
rss0 = {b: median(b, "rss_start_kb") for b in names}
rss1 = {b: median(b, "rss_after_kb") for b in names}
first = {b: median(b, "first_ms") for b in names}
n = max(len(runs.get(b, [])) for b in names)
print(f"{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, aseqosc {commit}, `{binary}`")
print()
print(f"One scripts/alsa-vm boot (kernel {kernel}, TCG, 1 vCPU); medians of {n} start-ups per bridge.")
print()
print("| | aseqosc | m2o | bare forwarder | aseqosc / m2o | aseqosc / bare | goal | met |")
print("|---|---|---|---|---|---|---|---|")
total = {b: stripped[b] + libraries[b] for b in names}
print(f"| stripped binary | {mb(stripped['aseqosc'])} | {mb(stripped['m2o'])} | {mb(stripped['bare'])} | "
      f"{ratio(stripped['aseqosc'], stripped['m2o'])} | {ratio(stripped['aseqosc'], stripped['bare'])} | | |")
print(f"| its own shared libraries (not libc, libm, libstdc++, libgcc_s, libasound) | {mb(libraries['aseqosc'])} | "
      f"{mb(libraries['m2o'])} | {mb(libraries['bare'])} | | | | |")
print(f"| stripped binary + its own libraries | {mb(total['aseqosc'])} | {mb(total['m2o'])} | {mb(total['bare'])} | "
      f"{ratio(total['aseqosc'], total['m2o'])} | {ratio(total['aseqosc'], total['bare'])} | <= 12 MB | "
      f"{met(total['aseqosc'] <= 12e6)} |")
print(f"| VmRSS after start-up (first event forwarded), default config | {mib(rss0['aseqosc'])} | {mib(rss0['m2o'])} | "
      f"{mib(rss0['bare'])} | {ratio(rss0['aseqosc'], rss0['m2o'])} | {ratio(rss0['aseqosc'], rss0['bare'])} | <= 8 MiB | "
      f"{met(rss0['aseqosc'] is not None and rss0['aseqosc'] <= 8192)} |")
print(f"| VmRSS after 100 more events | {mib(rss1['aseqosc'])} | {mib(rss1['m2o'])} | {mib(rss1['bare'])} | "
      f"{ratio(rss1['aseqosc'], rss1['m2o'])} | {ratio(rss1['aseqosc'], rss1['bare'])} | <= 8 MiB | "
      f"{met(rss1['aseqosc'] is not None and rss1['aseqosc'] <= 8192)} |")
print(f"| exec to the first forwarded event | {ms(first['aseqosc'])} | {ms(first['m2o'])} | {ms(first['bare'])} | "
      f"{ratio(first['aseqosc'], first['m2o'])} | {ratio(first['aseqosc'], first['bare'])} | <= 2x bare | "
      f"{met(None not in (first['aseqosc'], first['bare']) and first['aseqosc'] <= 2 * first['bare'])} |")
events = {b: [r.get("events") for r in runs.get(b, [])] for b in names}
bad = [f"{b}: {failures(b)} failed runs" for b in names if failures(b)]
bad += [f"{b}: received {e} of 100" for b in names for e in events[b] if e not in (None, "100")]
print()
def call(what):
    c = calls.get(what, {})
    return float(c["median_ms"]) if "median_ms" in c else None
send, amidi, version = call("send"), call("amidi"), call("version")
print("| per call (median of 20) | time | / `amidi -S` | goal | met |")
print("|---|---|---|---|---|")
print(f"| `aseqosc send --to 16:0 on C4 100 off C4` | {ms(send)} | {ratio(send, amidi)} | <= 1.5x | "
      f"{met(None not in (send, amidi) and send <= 1.5 * amidi)} |")
print(f"| `amidi -p hw:0,0 -S '90 3C 64 80 3C 00'` | {ms(amidi)} | 1.00x | | |")
print(f"| `aseqosc --version` | {ms(version)} | {ratio(version, amidi)} | | |")
for what in ("send", "amidi", "version"):
    if "failed" in calls.get(what, {}):
        bad.append(f"{what}: {calls[what]['failed']}")
if bad:
    print()
    print("Problems: " + "; ".join(bad) + ".")
PY
cat "$out/table.md"

if [ "$append" = 1 ]; then
  python3 - "$out/table.md" <<'PY'
import sys
table = open(sys.argv[1]).read().rstrip() + "\n"
heading = "## Footprint"
intro = (heading + "\n\n"
         "`Benchmarks/footprint.sh [ASEQOSC]`: stripped binary, VmRSS on the default config, exec to the\n"
         "first forwarded event, and the time of one `aseqosc send` call, for aseqosc, osmid's `m2o` and\n"
         "the bare C forwarder in one VM boot; the newest run (earlier ones: docs/benchmark-history.md).\n"
         "VM times are under software emulation (TCG): compare the ratios, not the milliseconds.\n")
title, body = table.split("\n", 1)
entry = "\n### " + title + "\n" + body


def section(text):
    """Where the Footprint section starts and ends in `text` (its end if there is none)."""
    if heading not in text:
        return len(text), len(text)
    start = text.index(heading)
    following = text.find("\n## ", start + len(heading))
    return start, len(text) if following < 0 else following


# BENCHMARKS.md shows the newest run only; the history keeps every run, newest last.
path = "BENCHMARKS.md"
text = open(path).read()
start, end = section(text)
text = text[:start].rstrip() + "\n\n" + intro + entry + text[end:]
open(path, "w").write(text)

path = "docs/benchmark-history.md"
text = open(path).read()
start, end = section(text)
text = text[:end].rstrip() + ("\n\n" + intro if start == end else "\n") + entry + text[end:]
open(path, "w").write(text)
PY
  echo "footprint.sh: BENCHMARKS.md (Footprint) now shows this run; appended to docs/benchmark-history.md" >&2
fi
