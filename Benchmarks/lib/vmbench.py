"""What the benchmarks' python parts in the VM share (Benchmarks/replay/in-vm.py,
Benchmarks/listen/in-vm.py): aseqosc's status, its ports, a sequencer port of our own that
plays into one of them, a UDP receiver that times what arrives, OSC packets, percentiles."""
import ctypes
import json
import os
import re
import signal
import struct
import subprocess
import sys
import time

RECEIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "replay", "receiver.py")


def log(text):
    print(text, flush=True)


def status(binary, control, timeout=60):
    """`aseqosc status --json` of the bridge on CONTROL, parsed."""
    result = subprocess.run([binary, "status", "--json", "--control", control],
                            capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        sys.exit(f"aseqosc status failed: {result.stderr}")
    return json.loads(result.stdout)


def bridge_port(name):
    """(client, port) of aseqosc's port NAME, from `aconnect -o` (write ports) ... -i."""
    for flag in ("-o", "-i"):
        client = None
        for line in subprocess.run(["aconnect", flag], capture_output=True, text=True).stdout.splitlines():
            m = re.match(r"client (\d+): '([^']*)'", line)
            if m:
                client = int(m.group(1)) if m.group(2) == "aseqosc" else None
                continue
            m = re.match(r"\s+(\d+) '([^']*)'", line)
            if m and client is not None and m.group(2).strip() == name:
                return client, int(m.group(1))
    sys.exit(f"no aseqosc port {name}")


class SequencerPort:
    """A sequencer port of our own (libasound through ctypes, python3-pyalsa being absent)
    connected to aseqosc's input INPUT: each event is written in this process, delivered by the
    kernel as the write returns, as a device's driver would."""

    def __init__(self, client_name, input_name):
        self.lib = ctypes.CDLL("libasound.so.2")
        self.seq = ctypes.c_void_p()
        if self.lib.snd_seq_open(ctypes.byref(self.seq), b"default", 1, 0) < 0:   # SND_SEQ_OPEN_OUTPUT
            sys.exit("snd_seq_open failed")
        self.lib.snd_seq_set_client_name(self.seq, client_name.encode())
        # CAP_READ | CAP_SUBS_READ; TYPE_MIDI_GENERIC | TYPE_APPLICATION
        self.port = self.lib.snd_seq_create_simple_port(self.seq, b"play", 1 | 32, 2 | (1 << 20))
        self.client = self.lib.snd_seq_client_id(self.seq)
        client, port = bridge_port(input_name)
        if self.lib.snd_seq_connect_to(self.seq, self.port, client, port) < 0:
            sys.exit("snd_seq_connect_to failed")

    def write(self, event):
        if self.lib.snd_seq_event_output_direct(self.seq, ctypes.c_char_p(event)) < 0:
            sys.exit("snd_seq_event_output_direct failed")

    def note_on(self, channel, note, velocity):
        # snd_seq_event_t: type NOTEON (6), flags 0, tag 0, queue DIRECT (253), time, source,
        # dest SUBSCRIBERS:UNKNOWN (254:253), note data (channel, note, velocity, off, duration).
        self.write(struct.pack("<BBBB8xBBBBBBBBI4x", 6, 0, 0, 253, self.client, self.port, 254, 253,
                               channel, note, velocity, 0, 0))

    def control(self, channel, controller, value):
        # CONTROLLER (10), control data (channel, 3 unused, param, value).
        self.write(struct.pack("<BBBB8xBBBBB3xIi", 10, 0, 0, 253, self.client, self.port, 254, 253,
                               channel, controller, value))


def _padded(b):
    b += b"\0"
    return b + b"\0" * (-len(b) % 4)


def osc_message(address, *ints):
    """An OSC message with int32 arguments."""
    return _padded(address.encode()) + _padded(b"," + b"i" * len(ints)) + struct.pack(f">{len(ints)}i", *ints)


def sync_packet(name):
    """`/aseqosc/sync ,s NAME`, as `oscsend ... /aseqosc/sync s NAME` sends it."""
    return _padded(b"/aseqosc/sync") + _padded(b",s") + _padded(name.encode())


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


class Receiver:
    """Benchmarks/replay/receiver.py on UDP PORT, writing OUT/NAME.txt: a line per message
    received, with its arrival time."""

    def __init__(self, out, name, port):
        self.path = f"{out}/{name}.txt"
        self.process = subprocess.Popen([sys.executable, RECEIVER, str(port), self.path],
                                        stdout=subprocess.PIPE, text=True)
        if self.process.stdout.readline().strip() != "ready":
            sys.exit("receiver did not start")

    def count(self):
        try:
            with open(self.path + ".count") as f:
                return int(f.read().strip() or 0)
        except (OSError, ValueError):
            return 0

    def wait_quiet(self, want=None, quiet=1.0, timeout=120):
        """Until `want` messages arrived, or (want None) none for `quiet` seconds."""
        deadline, last, since = time.monotonic() + timeout, -1, time.monotonic()
        while time.monotonic() < deadline:
            n = self.count()
            if want is not None and n >= want:
                return n
            if n != last:
                last, since = n, time.monotonic()
            elif want is None and time.monotonic() - since >= quiet:
                return n
            time.sleep(0.1)
        return self.count()

    def finish(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=120)
        rows = []
        with open(self.path) as f:
            for line in f:
                parts = line.split()
                rows.append((int(parts[0]), parts[1], parts[2:]))
        return rows
