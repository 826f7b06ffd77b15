"""Hostile HTTP against an OSCQuery server until killed: 12 silent connections (fewer than the 16
one address may hold, so that the fetches below get in), opened again as the server closes them; four threads fetching the whole namespace (GET /) back to back; one
sending oversized request lines and garbage. Prints "flooding" once all of that runs, then
what it did so far, every second and at SIGTERM.

    flood.py HOST PORT
"""
import signal
import socket
import sys
import threading
import time

host, port = sys.argv[1], int(sys.argv[2])
counts = {"namespace": 0, "hostile": 0, "silent": 0, "failed": 0}
lock = threading.RLock()


def bump(key):
    with lock:
        counts[key] += 1


def exchange(payload):
    try:
        s = socket.create_connection((host, port), timeout=5)
        s.sendall(payload)
        while s.recv(65536):
            pass
        s.close()
        return True
    except OSError:
        bump("failed")
        return False


def fetch():
    while True:
        if exchange(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"):
            bump("namespace")


def hostile():
    while True:
        exchange(b"GET /" + b"a" * 40000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        exchange(b"\x16\x03\x01\x02\x00garbage\r\n\r\n")
        bump("hostile")


def silent():
    held = []
    while True:
        while len(held) < 12:
            try:
                held.append(socket.create_connection((host, port), timeout=5))
                bump("silent")
            except OSError:
                bump("failed")
                time.sleep(0.05)
        # Closed by the server at its idle limit: drop those and open more.
        for s in list(held):
            s.setblocking(False)
            try:
                if s.recv(1) == b"":
                    held.remove(s)
                    s.close()
            except BlockingIOError:
                pass
            except OSError:
                held.remove(s)
        time.sleep(0.2)


def report():
    with lock:
        print(" ".join("%s=%d" % item for item in sorted(counts.items())), flush=True)


signal.signal(signal.SIGTERM, lambda *_: (report(), sys.exit(0)))
for target in [fetch] * 4 + [hostile, silent]:
    threading.Thread(target=target, daemon=True).start()
# "flooding" once the namespace has been fetched and the silent connections are held, so the
# measurement starts under the whole flood; then the counts every second.
while True:
    with lock:
        ready = counts["namespace"] > 0 and counts["silent"] >= 12
    if ready:
        print("flooding", flush=True)
        break
    time.sleep(0.1)
while True:
    time.sleep(1)
    report()
