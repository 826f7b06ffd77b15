#!/usr/bin/env python3
"""in-vm.py BINARY OUT NOTES: the part of Benchmarks/listen.sh that runs in the VM.

aseqosc reads input `keys` (our sequencer port connects to it) and `pads` ("Virtual Raw MIDI
0-1"); route `live` sends keys to 127.0.0.1:9400, where Benchmarks/replay/receiver.py listens, and pads to
127.0.0.1:9401 (a socket of ours that is never read); its OSC input (127.0.0.1:57200) plays
output `synth` into seq-receiver.py's port, and its OSCQuery server is on 57201.
The methods with a value (`/midi/{keys,pads,synth}/{1..16}/{cc,cc14,...}`, ACCESS 1 or 3) are
read from GET /. Each case paces NOTES note-ons 10 ms apart, unique note/velocity each, stamped
with time.monotonic_ns() just before the write, and 5 ms after each a controller change on
channel i % 16 (so that listened values move), and matches each note at the receiver:
  m2o:  note-ons and CCs from our sequencer port into `keys`, latency to receiver.py;
  o2m:  /midi/synth/{ch}/note_on ii and /midi/synth/{ch}/cc ii to the OSC input, latency to
        seq-receiver.py;
each with no WebSocket client, then with CLIENTS clients (listeners.py, one process, normal
priority) each LISTENing to every method with a value. Then the same m2o run with a mover
(48 controller, bend and pressure changes every 10 ms through "Virtual Raw MIDI 0-1" into
`pads`, so that each listen tick has 48 values a client), three times NOTES, once with no client and once
with CLIENTS clients that never read (closed by the bridge once 256 KiB wait for each).
Run at SCHED_FIFO 70 (listen.sh), as are the receivers it starts; the bridge runs as
configured. Writes OUT/results.json and prints a table."""
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from vmbench import Receiver, SequencerPort, log, osc_message, percentile  # noqa: E402
import vmbench  # noqa: E402

binary, out, notes = sys.argv[1], sys.argv[2], int(sys.argv[3])
CLIENTS = 16                      # WebSocket clients in a "listeners" case
DEST, SINK, OSC, QUERY = 9400, 9401, 57200, 57201
CONTROL = "/run/aseqosc-listen.sock"
RECEIVER_CLIENT = "listen-bench"
KINDS = {"cc", "cc14", "program", "pitch_bend", "pressure", "poly_pressure", "rpn", "nrpn"}
CONFIG = """{
  client: "aseqosc",
  inputs: [
    { name: "keys", from: "Virtual Raw MIDI 0-0" },
    { name: "pads", from: "Virtual Raw MIDI 0-1" },
  ],
  outputs: [{ name: "synth", to: "listen-bench" }],
  osc: { listen: "127.0.0.1:57200", query: { port: 57201 } },
  routes: [{ name: "live", from: ["keys", "pads"], fork: [
    { operators: [{ ports: ["keys"] }], destinations: [{ host: "127.0.0.1", port: 9400 }] },
    { operators: [{ ports: ["pads"] }], destinations: [{ host: "127.0.0.1", port: 9401 }] },
  ] }],
}
"""
# One route forked by input port (a1d8406, which the numbers in BENCHMARKS.md are from, stopped
# at start with a route per input: `from: ["pads"]` alone; fixed since).
# Below the instruments (SCHED_FIFO 70): the clients are another machine's load.
NORMAL = ["chrt", "-o", "0"]


def status():
    return vmbench.status(binary, CONTROL)


def web_socket():
    return status()["oscQuery"]["webSocket"]


def wait_for(what, test, timeout=180):
    deadline = time.monotonic() + timeout
    while True:
        state = web_socket()
        if test(state):
            return state
        if time.monotonic() > deadline:
            sys.exit(f"timed out waiting for {what}: {json.dumps(state)}")
        time.sleep(0.5)


class Listeners:
    """CLIENTS WebSocket clients (listeners.py), at normal priority."""

    def __init__(self, name, clients, no_read=False):
        self.path, self.clients, self.no_read = f"{out}/{name}.listeners.json", clients, no_read
        command = NORMAL + [sys.executable, f"{HERE}/listeners.py", f"ws://127.0.0.1:{QUERY}/", str(clients),
                            f"{out}/paths.txt", self.path]
        if no_read:
            command += ["--no-read", binary, "status", "--json", "--control", CONTROL]
        began = time.monotonic()
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        if self.process.stdout.readline().strip() != "ready":
            sys.exit("listeners did not start")
        want = clients * len(PATHS)
        self.before = wait_for(f"{want} listens", lambda s: s["listening"] == want and s["open"] == clients)
        self.setup_s = round(time.monotonic() - began, 1)

    def finish(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=120)
        after = wait_for("no WebSocket open", lambda s: s["open"] == 0 and s["listening"] == 0)
        with open(self.path) as f:
            result = json.load(f)
        result["setup_s"] = self.setup_s
        result["values_sent"] = after["valuesSent"] - self.before["valuesSent"]
        result["closed_not_reading"] = after["closedNotReading"] - self.before["closedNotReading"]
        return result


def methods():
    """The methods with a value, from GET / (a node with TYPE is a method)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{QUERY}/", timeout=60) as answer:
        tree = json.load(answer)
    found = []

    def walk(node):
        if "TYPE" in node and node.get("ACCESS") in (1, 3) and node["FULL_PATH"].rsplit("/", 1)[-1] in KINDS:
            found.append(node["FULL_PATH"])
        for child in node.get("CONTENTS", {}).values():
            walk(child)
    walk(tree)
    return sorted(found)


def summary(latencies, sent_count, lost):
    if not latencies:
        return {"notes": sent_count, "received": 0, "lost": lost}
    return {"notes": sent_count, "received": len(latencies), "lost": lost,
            "p50_ms": percentile(latencies, 50), "p99_ms": percentile(latencies, 99),
            "max_ms": max(latencies), "mean_ms": statistics.mean(latencies)}


def pace(play, move, mover=None, count=None):
    """play(i) at 10 ms steps, move(i) 5 ms after each, mover() along with move when given."""
    start = time.monotonic_ns()
    for i in range(count or notes):
        for offset, action in ((0, play), (5_000_000, move)):
            due = start + i * 10_000_000 + offset
            now = time.monotonic_ns()
            if due > now:
                time.sleep((due - now) / 1e9)
            action(i)
            if offset and mover:
                mover(i)
    return start


def m2o_run(name, mover=None, count=None):
    count = count or notes
    receiver = Receiver(out, name, DEST)
    sequencer = SequencerPort("listen-play", "keys")
    sent = {}

    def play(i):
        note, velocity = i % 128, 1 + i // 128 % 127
        sent[(note, velocity)] = time.monotonic_ns()
        sequencer.note_on(0, note, velocity)

    def move(i):
        sequencer.control(i % 16, 7, i % 128)

    pace(play, move, mover, count)
    time.sleep(1.5)
    rows = receiver.finish()
    latencies = []
    for ns, address, args in rows:
        if address == "/midi/keys/1/note_on":
            key = (int(args[0]), int(args[1]))
            if key in sent:
                latencies.append((ns - sent.pop(key)) / 1e6)
    return summary(latencies, count, len(sent))


O2M_CHANNEL = [0]


def o2m_run(name):
    # Each run's notes on a channel of their own, matched in seq-receiver.py's log.
    channel = O2M_CHANNEL[0]
    O2M_CHANNEL[0] += 1
    osc = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sent = {}

    def play(i):
        note, velocity = i % 128, 1 + i // 128
        packet = osc_message(f"/midi/synth/{channel + 1}/note_on", note, velocity)
        sent[(channel, note, velocity)] = time.monotonic_ns()
        osc.sendto(packet, ("127.0.0.1", OSC))

    def move(i):
        osc.sendto(osc_message(f"/midi/synth/{i % 16 + 1}/cc", 7, i % 128), ("127.0.0.1", OSC))

    pace(play, move)
    time.sleep(1.5)
    latencies = []
    with open(f"{out}/synth.txt") as f:
        for line in f:
            ns, *key = (int(x) for x in line.split())
            key = tuple(key)
            if key in sent:
                latencies.append((ns - sent.pop(key)) / 1e6)
    return summary(latencies, notes, len(sent))


def main():
    global PATHS
    os.makedirs(out, exist_ok=True)
    with open(f"{out}/aseqosc.json5", "w") as f:
        f.write(CONFIG)
    open(f"{out}/synth.txt", "w").close()
    midi_in = subprocess.Popen([sys.executable, f"{HERE}/seq-receiver.py", RECEIVER_CLIENT, f"{out}/synth.txt"],
                               stdout=subprocess.PIPE, text=True)
    if midi_in.stdout.readline().strip() != "ready":
        sys.exit("seq-receiver did not start")
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)   # route pads' destination, never read
    sink.bind(("127.0.0.1", SINK))
    bridge_log = open(f"{out}/bridge.log", "w")
    # This script and its receivers run at SCHED_FIFO 70 (listen.sh), above the bridge's own
    # threads, so that the times they take are the bridge's; the bridge starts as a normal
    # process and raises its own threads (the OSCQuery server's stays normal).
    pin = ["taskset", "-c", "0"] if (os.cpu_count() or 1) > 1 else []
    bridge = subprocess.Popen(pin + NORMAL + [binary, "run", "--config", f"{out}/aseqosc.json5", "--control", CONTROL],
                              stdout=bridge_log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while "running" not in open(f"{out}/bridge.log").read():
        if bridge.poll() is not None or time.monotonic() > deadline:
            sys.exit("aseqosc did not start: " + open(f"{out}/bridge.log").read())
        time.sleep(0.1)
    PATHS = methods()
    with open(f"{out}/paths.txt", "w") as f:
        f.write("\n".join(PATHS) + "\n")
    kinds = {}
    for path in PATHS:
        kinds[path.rsplit("/", 1)[-1]] = kinds.get(path.rsplit("/", 1)[-1], 0) + 1
    results = {"uname": os.uname().release, "cpus": os.cpu_count(), "notes": notes, "clients": CLIENTS,
               "methods": len(PATHS), "kinds": kinds}
    log(f"methods with a value: {len(PATHS)} {json.dumps(kinds)}")

    def case(key, run, clients=0, no_read=False, **extra):
        listeners = Listeners(key, clients, no_read) if clients or no_read else None
        result = run(key, **extra)
        if listeners:
            result["listeners"] = listeners.finish()
        results[key] = result
        log(f"{key}: {json.dumps(result)}")
        time.sleep(1)

    case("m2o_none", m2o_run)
    case("m2o_listen", m2o_run, CLIENTS)
    case("o2m_none", o2m_run)
    case("o2m_listen", o2m_run, CLIENTS)

    # 48 changes every 10 ms into `pads` through the raw device: a client's queue fills fast.
    device = os.open("/dev/snd/midiC0D1", os.O_WRONLY)

    def mover(i):
        v = i % 128
        chunk = bytearray()
        for ch in range(16):
            chunk += bytes([0xB0 | ch, 7, v, 0xE0 | ch, v, v, 0xD0 | ch, v])
        os.write(device, bytes(chunk))

    # Three times as long: under emulation the server queues a few hundred values a second a
    # client, and 256 KiB is some 6,000 of them.
    case("mover_none", m2o_run, 0, True, mover=mover, count=3 * notes)
    case("mover_noread", m2o_run, CLIENTS, True, mover=mover, count=3 * notes)
    os.close(device)

    state = status()
    results["oscQuery"] = state.get("oscQuery")
    bridge.send_signal(signal.SIGTERM)
    bridge.wait(timeout=60)
    midi_in.send_signal(signal.SIGTERM)
    midi_in.wait(timeout=60)
    with open(f"{out}/results.json", "w") as f:
        json.dump(results, f, indent=2)

    log("")
    log(f"RESULTS (VM {results['uname']}, {results['cpus']} vCPU, {notes} notes a case, "
        f"{CLIENTS} clients x {len(PATHS)} listens)")
    log("  note-on latency (ms)                 p50      p99      max   received   frames to the clients")
    rows = (("MIDI -> OSC", "m2o_none", "m2o_listen"), ("OSC -> MIDI", "o2m_none", "o2m_listen"),
            ("MIDI -> OSC + mover", "mover_none", "mover_noread"))
    for title, none, listen in rows:
        a, b = results[none], results[listen]
        label = "silent" if none == "mover_none" else "listening"
        for text, r in (("no client", a), (f"{CLIENTS} {label}", b)):
            frames = r.get("listeners", {}).get("frames")
            extra = f"{sum(frames)} ({min(frames)}..{max(frames)} a client)" if frames else ""
            if none == "mover_none" and r is b:
                at = r["listeners"].get("closed_not_reading_at_s", [])
                extra = f"{r['listeners']['closed_not_reading']} closed not reading" + (f", by {max(at)} s" if at else "")
            log(f"  {title + ', ' + text:36} {r.get('p50_ms', float('nan')):8.2f} {r.get('p99_ms', float('nan')):8.2f} "
                f"{r.get('max_ms', float('nan')):8.2f}   {r['received']}/{r['notes']}   {extra}")
        if "p50_ms" in a and "p50_ms" in b:
            log(f"  {title + ', ratio':36} {b['p50_ms'] / a['p50_ms']:8.2f} {b['p99_ms'] / a['p99_ms']:8.2f} "
                f"{b['max_ms'] / a['max_ms']:8.2f}")


if __name__ == "__main__":
    main()
