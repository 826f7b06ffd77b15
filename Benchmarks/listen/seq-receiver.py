#!/usr/bin/env python3
"""seq-receiver.py CLIENT OUT: the MIDI destination of Benchmarks/listen.sh. A sequencer client
CLIENT with one port "in" (libasound through ctypes) that the bridge's output is connected to;
appends each note-on as it arrives to OUT, `ns channel note velocity` (time.monotonic_ns(),
the clock the driver stamps its sends with). Prints `ready` once the port exists; ends on
SIGTERM."""
import ctypes
import os
import select
import signal
import sys
import time

EAGAIN = 11
NOTEON = 6


def main():
    name, out = sys.argv[1], sys.argv[2]
    lib = ctypes.CDLL("libasound.so.2")
    seq = ctypes.c_void_p()
    if lib.snd_seq_open(ctypes.byref(seq), b"default", 2, 0) < 0:   # SND_SEQ_OPEN_INPUT
        sys.exit("snd_seq_open failed")
    lib.snd_seq_set_client_name(seq, name.encode())
    # CAP_WRITE | CAP_SUBS_WRITE; TYPE_MIDI_GENERIC | TYPE_APPLICATION
    if lib.snd_seq_create_simple_port(seq, b"in", 2 | 64, 2 | (1 << 20)) < 0:
        sys.exit("snd_seq_create_simple_port failed")
    lib.snd_seq_nonblock(seq, 1)
    count = lib.snd_seq_poll_descriptors_count(seq, select.POLLIN)
    fds = (ctypes.c_byte * (8 * count))()   # struct pollfd: int fd; short events, revents
    lib.snd_seq_poll_descriptors(seq, fds, count, select.POLLIN)
    poller = select.poll()
    for i in range(count):
        poller.register(int.from_bytes(bytes(fds[8 * i:8 * i + 4]), "little", signed=True), select.POLLIN)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    event = ctypes.c_void_p()
    log = open(out, "w", buffering=1)
    print("ready", flush=True)
    while not stop:
        try:
            poller.poll(100)
        except InterruptedError:
            continue
        while True:
            result = lib.snd_seq_event_input(seq, ctypes.byref(event))
            if result < 0:
                if result != -EAGAIN:
                    print(f"snd_seq_event_input: {result}", file=sys.stderr, flush=True)
                break
            now = time.monotonic_ns()
            # snd_seq_event_t: type at 0, note data (channel, note, velocity) at 16.
            data = ctypes.string_at(event.value, 28)
            if data[0] == NOTEON:
                log.write(f"{now} {data[16]} {data[17]} {data[18]}\n")
    log.close()


if __name__ == "__main__":
    main()
