#!/usr/bin/python3
"""Runs in the ALSA VM as root (Benchmarks/loss.sh and Benchmarks/jitter.sh boot it): two
aseqosc bridges, A (MIDI -> OSC) and B (OSC -> MIDI), over a loopback made lossy or jittery with
netem. This script plays notes into A through an ALSA port of its own and listens to B's output
on another, with one clock for both.

    in-vm.py loss ASEQOSC OUT NOTES LOSS
        NOTES notes at a human rate over a loopback losing LOSS% of its packets, with
        `recovery: true` on A's destination and without: notes stuck, repair times; then A is
        killed with five notes held and the time until B has released them is taken.
    in-vm.py jitter ASEQOSC OUT NOTES DELAY_MS JITTER_MS LATENCY_MS
        NOTES notes every 50 ms over a loopback delaying each packet DELAY_MS +- JITTER_MS, with
        `latency: LATENCY_MS` on A's destination and without: how far B's intervals between
        notes stray from the intervals they were played at.

Prints one RESULT line per mode (key=value) and writes the bridges' logs into OUT.
"""
import os
import signal
import statistics
import subprocess
import sys
import time

from pyalsa import alsaseq

NOTE_ON, NOTE_OFF = alsaseq.SEQ_EVENT_NOTEON, alsaseq.SEQ_EVENT_NOTEOFF
PORT = 57500


def start_bridge(aseqosc, out, name, config):
    path = os.path.join(out, f"{name}.json5")
    with open(path, "w") as file:
        file.write(config)
    log = open(os.path.join(out, f"{name}.log"), "w")
    process = subprocess.Popen([aseqosc, "run", "--config", path, "--control", f"/run/{name}.control"],
                               stderr=log, stdout=log)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if "NOTICE  running" in open(log.name).read():
            return process
        if process.poll() is not None:
            break
        time.sleep(0.05)
    sys.exit(f"{name} did not start: {open(log.name).read()}")


class Harness:
    def __init__(self):
        self.seq = alsaseq.Sequencer(clientname="loss-bench")
        self.play = self.seq.create_simple_port(
            "play", alsaseq.SEQ_PORT_TYPE_APPLICATION,
            alsaseq.SEQ_PORT_CAP_READ | alsaseq.SEQ_PORT_CAP_SUBS_READ)
        self.listen = self.seq.create_simple_port(
            "listen", alsaseq.SEQ_PORT_TYPE_APPLICATION,
            alsaseq.SEQ_PORT_CAP_WRITE | alsaseq.SEQ_PORT_CAP_SUBS_WRITE)
        self.received = []  # (monotonic time, type, channel, note)

    def send(self, kind, note):
        event = alsaseq.SeqEvent(kind)
        event.set_data({"note.channel": 0, "note.note": note, "note.velocity": 100 if kind == NOTE_ON else 0})
        event.source = (self.seq.client_id, self.play)
        event.dest = (alsaseq.SEQ_ADDRESS_SUBSCRIBERS, alsaseq.SEQ_ADDRESS_UNKNOWN)
        self.seq.output_event(event)
        self.seq.drain_output()
        return time.monotonic()

    def receive_until(self, deadline):
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            for event in self.seq.receive_events(timeout=max(1, int(left * 1000)), maxevents=64):
                if event.type in (NOTE_ON, NOTE_OFF):
                    data = event.get_data()
                    kind = NOTE_OFF if event.type == NOTE_OFF or data["note.velocity"] == 0 else NOTE_ON
                    self.received.append((time.monotonic(), kind, data["note.channel"], data["note.note"]))

    def sounding(self, since=0):
        notes = set()
        for _, kind, _, note in self.received[since:]:
            (notes.add if kind == NOTE_ON else notes.discard)(note)
        return notes


def stuck(received):
    """Notes B left sounding: still on when played again, or at the end."""
    sounding, count = set(), 0
    for _, kind, _, note in received:
        if kind == NOTE_ON:
            if note in sounding:
                count += 1
            sounding.add(note)
        else:
            sounding.discard(note)
    return count + len(sounding)


def run(aseqosc, out, notes, loss, recovery):
    mode = "recovery" if recovery else "plain"
    harness = Harness()
    receiver = start_bridge(aseqosc, out, f"b-{mode}", (
        '{ client: "loss-b", outputs: [{ name: "thru", to: "loss-bench:listen" }], '
        f'osc: {{ listen: "127.0.0.1:{PORT}" }}, realtime: false }}'))
    player = start_bridge(aseqosc, out, f"a-{mode}", (
        '{ client: "loss-a", inputs: [{ name: "thru", from: "loss-bench:play" }], realtime: false, routes: [{ '
        f'destinations: [{{ host: "127.0.0.1", port: {PORT}, recovery: {"true" if recovery else "false"} }}] }}] }}'))
    harness.receive_until(time.monotonic() + 0.5)

    # A note every 60 ms, held 40 ms, over 61 notes (C2..C7), so a note comes round again after
    # 3.7 s: a note-off lost and not repaired by then counts as stuck.
    sent = []  # (time sent, kind, note)
    start = time.monotonic()
    for index in range(notes):
        note = 36 + index * 7 % 61
        at = start + index * 0.060
        harness.receive_until(at)
        sent.append((harness.send(NOTE_ON, note), NOTE_ON, note))
        harness.receive_until(at + 0.040)
        sent.append((harness.send(NOTE_OFF, note), NOTE_OFF, note))
    harness.receive_until(time.monotonic() + 3.0)

    # Each note-off sent, matched to the first note-off of its note that B played before the
    # note was played again: the delay of the ones that were lost is the repair time.
    delays, missing = [], 0
    offs_at_b = {}
    for when, kind, _, note in harness.received:
        if kind == NOTE_OFF:
            offs_at_b.setdefault(note, []).append(when)
    for index, (when, kind, note) in enumerate(sent):
        if kind != NOTE_OFF:
            continue
        again = next((t for t, k, n in sent[index + 1:] if k == NOTE_ON and n == note), float("inf"))
        arrived = [t for t in offs_at_b.get(note, []) if when <= t < again]
        if arrived:
            delays.append((arrived[0] - when) * 1000)
        else:
            missing += 1  # lost with nothing to repair it (stuck, or its note-on was lost too)
    ons = sum(1 for _, kind, _, _ in harness.received if kind == NOTE_ON)
    repaired = sorted(d for d in delays if d > 20)

    # A killed with five notes held: how long until B has released them all.
    mark = len(harness.received)
    held = [60, 64, 67, 71, 74]
    for note in held:
        harness.send(NOTE_ON, note)
    harness.receive_until(time.monotonic() + 0.3)
    sounding_at_kill = harness.sounding(mark) & set(held)
    player.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    released = None
    while time.monotonic() < killed + 5:
        harness.receive_until(time.monotonic() + 0.02)
        if not harness.sounding(mark) & set(held):
            released = time.monotonic() - killed
            break
    player.wait()
    receiver.send_signal(signal.SIGTERM)
    receiver.wait()

    def pct(values, q):
        return f"{values[min(len(values) - 1, int(q * len(values)))]:.0f}" if values else "-"

    print(f"RESULT mode={mode} loss={loss} notes={notes} ons_at_b={ons} note_offs_at_b={len(delays)} "
          f"stuck={stuck(harness.received[:mark])} note_offs_missing={missing} late_offs={len(repaired)} "
          f"repair_p50_ms={pct(repaired, 0.5)} repair_p90_ms={pct(repaired, 0.9)} "
          f"repair_max_ms={repaired[-1] if repaired else 0:.0f} "
          f"direct_p50_ms={statistics.median([d for d in delays if d <= 20] or [0]):.1f} "
          f"held_at_kill={len(sounding_at_kill)} released_after_kill_s="
          f"{'never' if released is None else f'{released:.2f}'}", flush=True)
    del harness


def jitter(aseqosc, out, notes, latency):
    mode = f"latency{latency}" if latency else "plain"
    harness = Harness()
    receiver = start_bridge(aseqosc, out, f"b-{mode}", (
        '{ client: "jitter-b", outputs: [{ name: "thru", to: "loss-bench:listen" }], '
        f'osc: {{ listen: "127.0.0.1:{PORT}" }} }}'))
    option = f", latency: {latency}" if latency else ""
    player = start_bridge(aseqosc, out, f"a-{mode}", (
        '{ client: "jitter-a", inputs: [{ name: "thru", from: "loss-bench:play" }], routes: [{ '
        f'destinations: [{{ host: "127.0.0.1", port: {PORT}{option} }}] }}] }}'))
    harness.receive_until(time.monotonic() + 0.5)
    played = []
    start = time.monotonic()
    for index in range(notes):
        harness.receive_until(start + index * 0.050)
        played.append(harness.send(NOTE_ON, 36 + index % 61))
        harness.receive_until(start + index * 0.050 + 0.020)
        harness.send(NOTE_OFF, 36 + index % 61)
    harness.receive_until(time.monotonic() + 2.0)
    heard = [when for when, kind, _, _ in harness.received if kind == NOTE_ON]
    player.send_signal(signal.SIGTERM)
    receiver.send_signal(signal.SIGTERM)
    player.wait()
    receiver.wait()
    count = min(len(played), len(heard))
    # How far each interval at B strays from the interval the notes were played at (ms).
    errors = sorted(abs((heard[i] - heard[i - 1]) - (played[i] - played[i - 1])) * 1000 for i in range(1, count))
    transit = sorted((heard[i] - played[i]) * 1000 for i in range(count))

    def pct(values, q):
        return f"{values[min(len(values) - 1, int(q * len(values)))]:.2f}" if values else "-"

    print(f"RESULT mode={mode} notes={notes} heard={len(heard)} interval_error_p50_ms={pct(errors, 0.5)} "
          f"interval_error_p99_ms={pct(errors, 0.99)} interval_error_max_ms={pct(errors, 1.0)} "
          f"interval_error_sd_ms={statistics.pstdev(errors) if errors else 0:.2f} "
          f"transit_p50_ms={pct(transit, 0.5)} transit_p99_ms={pct(transit, 0.99)}", flush=True)
    del harness


def netem(*arguments):
    subprocess.run(["tc", "qdisc", "add", "dev", "lo", "root", "netem", *arguments], check=True)


def main(kind, aseqosc, out, notes, *rest):
    try:
        if kind == "loss":
            netem("loss", f"{rest[0]}%")
            for recovery in (True, False):
                run(aseqosc, out, int(notes), rest[0], recovery)
        else:
            delay, spread, latency = rest
            netem("delay", f"{delay}ms", f"{spread}ms")
            for each in (int(latency), 0):
                jitter(aseqosc, out, int(notes), each)
    finally:
        subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"])


if __name__ == "__main__":
    main(*sys.argv[1:])
