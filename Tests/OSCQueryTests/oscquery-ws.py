#!/usr/bin/env python3
"""A WebSocket client of an OSCQuery server, for the tests: the `websockets` package (PyPI) as
the real client, python-osc to read the OSC frames.

    oscquery-ws.py ws://HOST:PORT [--listen PATH]... [--ignore PATH]... [--command NAME]... [--count N]
                   [--timeout S] [--no-read] [--flood N] [--oversized BYTES] [--garbage]

Sends a LISTEN for each --listen path (then an IGNORE for each --ignore path, then each
--command without DATA, e.g. STATUS) and prints
`ready`, then one line per frame received: `osc ADDRESS ARG...` for a binary frame (an OSC
message), `text JSON` for a text frame. Ends after --count frames (status 0), at --timeout
(status 1 when --count was not reached) or when the server closes (`closed CODE`, status 0 when
no --count was asked for). Hostile modes: --no-read stops reading after `ready` (the library
stops taking frames from the socket once its small queue is full) and waits for the server to
close; --flood sends N text frames that are not commands; --oversized sends one text frame of
BYTES; --garbage sends bytes that are no WebSocket frame after the handshake (raw socket).
"""
import argparse
import json
import socket
import sys
import time

from pythonosc.osc_message import OscMessage
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect


def out(line):
    print(line, flush=True)


def garbage(url):
    host, port = url.removeprefix("ws://").split("/")[0].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        raw.sendall(
            b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        answer = raw.recv(4096)
        out("handshake " + answer.split(b"\r\n", 1)[0].decode())
        # Opcode 0x3 is reserved: a protocol error the library must close on.
        raw.sendall(bytes([0x83, 0x85, 1, 2, 3, 4]) + b"hello")
        try:
            while raw.recv(4096):
                pass
        except OSError:
            pass
        out("closed")
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--listen", action="append", default=[])
    parser.add_argument("--ignore", action="append", default=[])
    parser.add_argument("--command", action="append", default=[])
    parser.add_argument("--count", type=int)
    parser.add_argument("--timeout", type=float, default=20)
    parser.add_argument("--no-read", action="store_true")
    parser.add_argument("--flood", type=int, default=0)
    parser.add_argument("--oversized", type=int, default=0)
    parser.add_argument("--garbage", action="store_true")
    args = parser.parse_args()
    if args.garbage:
        return garbage(args.url)

    deadline = time.monotonic() + args.timeout
    sock = None
    if args.no_read:
        # A small receive buffer, so the server's side fills in a second rather than a minute.
        host, port = args.url.removeprefix("ws://").split("/")[0].rsplit(":", 1)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect((host, int(port)))
    with connect(args.url, sock=sock, max_queue=4, open_timeout=10, compression=None, max_size=None) as ws:
        for path in args.listen:
            ws.send(json.dumps({"COMMAND": "LISTEN", "DATA": path}))
        for path in args.ignore:
            ws.send(json.dumps({"COMMAND": "IGNORE", "DATA": path}))
        for command in args.command:
            ws.send(json.dumps({"COMMAND": command}))
        for number in range(args.flood):
            ws.send(json.dumps({"COMMAND": "NOTHING", "DATA": number}))
        if args.oversized:
            ws.send("x" * args.oversized)
        out("ready")
        if args.no_read:
            # Nothing is read; ping frames go unanswered too, so the server may close for that.
            while time.monotonic() < deadline:
                time.sleep(0.1)
                if ws.protocol.close_code is not None or ws.protocol.state.name == "CLOSED":
                    break
            out(f"closed {ws.protocol.close_code}")
            return 0
        received = 0
        while args.count is None or received < args.count:
            try:
                frame = ws.recv(timeout=max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                return 1 if args.count is not None else 0
            except ConnectionClosed as closed:
                out(f"closed {closed.rcvd.code if closed.rcvd else None}")
                return 0 if args.count is None else 1
            received += 1
            if isinstance(frame, bytes):
                message = OscMessage(frame)
                out(" ".join(["osc", message.address] + [str(value) for value in message.params]))
            else:
                out("text " + frame)
    return 0


if __name__ == "__main__":
    sys.exit(main())
