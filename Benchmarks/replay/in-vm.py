#!/usr/bin/env python3
"""in-vm.py BINARY OUT NOTES: the part of Benchmarks/replay.sh that runs in the VM.

aseqosc reads "Virtual Raw MIDI 0-0".."0-2" (inputs in0..in2, route "faders") and sends to one
UDP destination (127.0.0.1:9400, sync: ["request"]); receiver.py listens there.
1. prefill: every kept controller (1-119 but 6, 32, 38, 96-101) and poly pressure on all 128
   notes, 16 channels, written to each raw device hw:0,0..hw:0,2; waits until all arrived live.
2. replay: /aseqosc/sync s faders (the datagram oscsend sends, sent from here so that its time
   is known); first and last replayed message's arrival.
3. latency: NOTES note-ons, one every 10 ms, from a sequencer port of ours connected to in0
   (unique note/velocity each, stamped with time.monotonic_ns() just before the write),
   matched at the receiver; once quiet, once while /aseqosc/sync s faders is sent every 1.1 s
   (replays back to back: a request during a replay starts it again from the top).
Run at SCHED_FIFO 70 (replay.sh), as are the receivers it starts; the bridge runs as configured.
Writes OUT/results.json and prints a table."""
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from vmbench import Receiver, SequencerPort, log, percentile, sync_packet  # noqa: E402
import vmbench  # noqa: E402

binary, out, notes = sys.argv[1], sys.argv[2], int(sys.argv[3])
DEST, OSC = 9400, 57200
CONTROL = "/run/aseqosc-replay.sock"
CONTROLLERS = [c for c in range(1, 120) if c not in (6, 32, 38, 96, 97, 98, 99, 100, 101)]
DEVICES = 3
CONFIG = """{
  client: "aseqosc",
  inputs: [
    { name: "in0", from: "Virtual Raw MIDI 0-0" },
    { name: "in1", from: "Virtual Raw MIDI 0-1" },
    { name: "in2", from: "Virtual Raw MIDI 0-2" },
  ],
  outputs: [{ name: "thru", to: "Midi Through" }],
  osc: { listen: "127.0.0.1:57200" },
  routes: [{ name: "faders", from: ["in0", "in1", "in2"],
             destinations: [{ host: "127.0.0.1", port: 9400, sync: ["request"] }] }],
}
"""


def status():
    return vmbench.status(binary, CONTROL, timeout=30)


def destination(state):
    return state["routes"][0]["destinations"][0]


def replayed():
    return destination(status())["replayed"]


def drops():
    """Datagrams the kernel dropped: backlog (softnet_stat) and UDP receive buffer (snmp)."""
    backlog = 0
    with open("/proc/net/softnet_stat") as f:
        for line in f:
            backlog += int(line.split()[1], 16)
    with open("/proc/net/snmp") as f:
        udp = [line.split() for line in f if line.startswith("Udp:")]
    rcvbuf = int(udp[1][udp[0].index("RcvbufErrors")])
    return {"backlog": backlog, "rcvbuf": rcvbuf}


def dropped_since(before):
    now = drops()
    return {k: now[k] - before[k] for k in now}


def latency_run(name, with_replays):
    receiver = Receiver(out, name, DEST)
    sender = SequencerPort("replay-bench", "in0")
    osc = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    before, kernel = status(), drops()
    sent = {}
    start = time.monotonic_ns()
    lead = 300_000_000 if with_replays else 0    # the first replay under way before the first note
    next_sync = start if with_replays else None
    syncs, sync_times = 0, []
    for i in range(notes):
        due = start + lead + i * 10_000_000
        while True:
            now = time.monotonic_ns()
            if next_sync is not None and now >= next_sync:
                sync_times.append(time.monotonic_ns())
                osc.sendto(sync_packet("faders"), ("127.0.0.1", OSC))
                syncs += 1
                next_sync += 1_100_000_000
                continue
            if now >= due:
                break
            wake = due if next_sync is None else min(due, next_sync)
            time.sleep(max(0, wake - now) / 1e9)
        note, velocity = i % 128, 1 + i // 128
        sent[(note, velocity)] = time.monotonic_ns()
        sender.note_on(0, note, velocity)
    receiver.wait_quiet(quiet=1.5, timeout=60)
    after = status()
    rows = receiver.finish()
    latencies, replay_rows, trace = [], 0, []
    for ns, address, args in rows:
        if address == "/midi/in0/1/note_on":
            key = (int(args[0]), int(args[1]))
            if key in sent:
                at = sent.pop(key)
                latencies.append((ns - at) / 1e6)
                trace.append(f"note {at - start} {ns - at}")
        else:
            replay_rows += 1
    with open(f"{out}/{name}.latency.txt", "w") as f:   # ns since the run's start; latency ns
        f.write("".join(f"sync {t - start} 0\n" for t in sync_times) + "\n".join(trace) + "\n")
    result = {
        "notes": notes, "received": len(latencies), "lost": len(sent),
        "p50_ms": percentile(latencies, 50), "p99_ms": percentile(latencies, 99),
        "max_ms": max(latencies), "mean_ms": statistics.mean(latencies),
        "syncs_sent": syncs,
        "replayed": destination(after)["replayed"] - destination(before)["replayed"],
        "replay_messages_received": replay_rows,
        "refused": after.get("replaysRefused", 0) - before.get("replaysRefused", 0),
        "kernel_dropped": dropped_since(kernel), "destination_errors": destination(after).get("errors"),
    }
    log(f"latency {name}: {json.dumps(result)}")
    return result


def main():
    os.makedirs(out, exist_ok=True)
    for name, value in (("rmem_max", 16 << 20), ("netdev_max_backlog", 1 << 20)):
        try:
            with open(f"/proc/sys/net/core/{name}", "w") as f:
                f.write(f"{value}\n")
        except OSError:
            pass
    with open(f"{out}/aseqosc.json5", "w") as f:
        f.write(CONFIG)
    bridge_log = open(f"{out}/bridge.log", "w")
    # This script and its receivers run at SCHED_FIFO 70 (replay.sh), above the bridge's own
    # threads (priority 4), so that the times they take are the bridge's; the bridge starts as
    # a normal process and raises its own threads.
    # With two vCPUs (REPLAY_SMP=2) the bridge keeps CPU 0 and the instruments CPU 1.
    pin = ["taskset", "-c", "0"] if (os.cpu_count() or 1) > 1 else []
    bridge = subprocess.Popen(pin + ["chrt", "-o", "0", binary, "run", "--config", f"{out}/aseqosc.json5", "--control", CONTROL],
                              stdout=bridge_log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while "running" not in open(f"{out}/bridge.log").read():
        if bridge.poll() is not None or time.monotonic() > deadline:
            sys.exit("aseqosc did not start: " + open(f"{out}/bridge.log").read())
        time.sleep(0.1)
    results = {"uname": os.uname().release, "cpus": os.cpu_count()}

    # 1. Prefill, live.
    per_device = len(CONTROLLERS) * 16 + 128 * 16
    total = per_device * DEVICES
    kernel = drops()
    receiver = Receiver(out, "prefill", DEST)
    began = time.monotonic()
    for d in range(DEVICES):
        device = os.open(f"/dev/snd/midiC0D{d}", os.O_WRONLY)
        for ch in range(16):
            chunk = bytearray()
            for c in CONTROLLERS:
                chunk += bytes([0xB0 | ch, c, 1 + (c + ch + d) % 127])
            for n in range(128):
                chunk += bytes([0xA0 | ch, n, 1 + (n + 2 * ch + d) % 127])
            os.write(device, bytes(chunk))
            time.sleep(0.05)   # 238 events at a time: well within the sequencer's input queue
        os.close(device)
    got = receiver.wait_quiet(want=total, timeout=120)
    live_seconds = time.monotonic() - began
    receiver.finish()
    state = status()
    results["prefill"] = {"sent": total, "received": got, "seconds": round(live_seconds, 2),
                          "eventsIn": state["routes"][0]["eventsIn"],
                          "kernel_dropped": dropped_since(kernel)}
    log(f"prefill: {json.dumps(results['prefill'])}")

    # 2. One replay.
    receiver = Receiver(out, "replay", DEST)
    before, kernel = replayed(), drops()
    osc = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    asked = time.monotonic_ns()
    osc.sendto(sync_packet("faders"), ("127.0.0.1", OSC))   # what `oscsend ... /aseqosc/sync s faders` sends
    receiver.wait_quiet(quiet=2.0, timeout=120)
    rows = receiver.finish()
    count = replayed() - before
    times = [ns for ns, _, _ in rows]
    duration = (times[-1] - times[0]) / 1e9 if len(times) > 1 else float("nan")
    kinds = {}
    for _, address, _ in rows:
        kind = address.rsplit("/", 1)[-1]
        kinds[kind] = kinds.get(kind, 0) + 1
    results["replay"] = {
        "replayed_status": count, "received": len(rows), "kinds": kinds,
        "first_after_request_ms": round((times[0] - asked) / 1e6, 1) if times else None,
        "duration_s": round(duration, 3),
        "values_per_s": round((len(rows) - 1) / duration) if len(rows) > 1 else None,
        "kernel_dropped": dropped_since(kernel), "destination_errors": destination(status()).get("errors"),
    }
    log(f"replay: {json.dumps(results['replay'])}")
    time.sleep(1.2)   # one request a second per destination

    # 3. Live latency, quiet and during replays.
    results["quiet"] = latency_run("quiet", False)
    time.sleep(1.2)
    results["replaying"] = latency_run("replaying", True)
    state = status()
    results["bridge"] = {"replaysRefused": state.get("replaysRefused"),
                         "syncRequests": state.get("oscInput", {}).get("syncRequests")}

    bridge.send_signal(signal.SIGTERM)
    bridge.wait(timeout=60)
    with open(f"{out}/results.json", "w") as f:
        json.dump(results, f, indent=2)

    q, r, p = results["quiet"], results["replaying"], results["replay"]
    log("")
    log(f"RESULTS (VM {results['uname']}, {results['cpus']} vCPU)")
    log(f"  stored values (live, received/sent)     {results['prefill']['received']}/{total}")
    log(f"  replay: values replayed (status)        {p['replayed_status']}")
    log(f"  replay: messages received               {p['received']}")
    log(f"  replay: first..last arrival             {p['duration_s']} s")
    log(f"  replay: rate                            {p['values_per_s']} values/s")
    log(f"  replay: request -> first value          {p['first_after_request_ms']} ms")
    log("  live note-on latency (ms)        p50      p99      max   received")
    log(f"    no replay                  {q['p50_ms']:8.2f} {q['p99_ms']:8.2f} {q['max_ms']:8.2f}   {q['received']}/{notes}")
    log(f"    replays back to back       {r['p50_ms']:8.2f} {r['p99_ms']:8.2f} {r['max_ms']:8.2f}   {r['received']}/{notes}")
    log(f"    ratio (replaying / quiet)  {r['p50_ms'] / q['p50_ms']:8.2f} {r['p99_ms'] / q['p99_ms']:8.2f}")
    log(f"  during the latency run: {r['syncs_sent']} requests sent, {r['refused']} refused, "
        f"{r['replayed']} values replayed (status), {r['replay_messages_received']} received")


if __name__ == "__main__":
    main()
