#!/usr/bin/env python3
"""receiver.py PORT OUT: the UDP destination of Benchmarks/replay.sh. Records each datagram's
arrival (time.monotonic_ns(), the clock the driver stamps its sends with), keeps the count of OSC
messages in OUT.count (rewritten every 0.1 s) and, on SIGTERM, writes every message to OUT as
`ns address arg...` lines. Prints `ready` once bound."""
import os
import signal
import socket
import struct
import sys
import time


def messages(packet):
    """(address, [args]) for each OSC message in a packet (bundles opened); i, f, s only."""
    if packet.startswith(b"#bundle\0"):
        offset = 16
        while offset + 4 <= len(packet):
            (size,) = struct.unpack_from(">i", packet, offset)
            yield from messages(packet[offset + 4:offset + 4 + size])
            offset += 4 + size
        return

    def string(at):
        end = packet.index(b"\0", at)
        return packet[at:end].decode("utf-8", "replace"), (end + 4) & ~3

    address, at = string(0)
    args = []
    if at < len(packet) and packet[at:at + 1] == b",":
        tags, at = string(at)
        for tag in tags[1:]:
            if tag == "i":
                args.append(struct.unpack_from(">i", packet, at)[0]); at += 4
            elif tag == "f":
                args.append(struct.unpack_from(">f", packet, at)[0]); at += 4
            elif tag == "s":
                value, at = string(at); args.append(value)
            else:
                args.append(tag)
    yield address, args


def count(packet):
    return sum(1 for _ in messages(packet)) if packet.startswith(b"#") else 1


def main():
    port, out = int(sys.argv[1]), sys.argv[2]
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    sock.bind(("127.0.0.1", port))
    sock.settimeout(0.05)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    received, total, flushed = [], 0, 0
    print("ready", flush=True)
    while not stop:
        try:
            data = sock.recv(65536)
            received.append((time.monotonic_ns(), data))
            total += count(data)
        except socket.timeout:
            pass
        except InterruptedError:
            continue
        now = time.monotonic_ns()
        if now - flushed > 100_000_000:
            with open(out + ".count.tmp", "w") as f:
                f.write(f"{total}\n")
            os.replace(out + ".count.tmp", out + ".count")
            flushed = now
    with open(out, "w") as f:
        for ns, data in received:
            for address, args in messages(data):
                f.write(" ".join([str(ns), address] + [str(a) for a in args]) + "\n")
    with open(out + ".count", "w") as f:
        f.write(f"{total}\n")


if __name__ == "__main__":
    main()
