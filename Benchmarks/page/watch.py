#!/usr/bin/env python3
"""A status page watching one aseqosc: connects the page's WebSocket, asks for the status and
the monitor as the page does, and reads every frame, discarding it, until SIGTERM; then prints
what it got. Part of Benchmarks/page.sh.

    watch.py PORT [COMMAND...]     (default: STATUS MONITOR, as the page asks)

Prints "watching" once the first frame has come (the server counts the page as watching), and
at the end one line:

    PAGE frames=.. status_frames=.. events_frames=.. lines=.. dropped=.. max_lines=..
"""
import json
import signal
import sys
import time

from websockets.sync.client import connect


def main(port, commands):
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    deadline = time.monotonic() + 60
    while True:
        try:
            ws = connect(f"ws://127.0.0.1:{port}/", max_size=None)
            break
        except OSError:
            if time.monotonic() > deadline:
                sys.exit(f"watch.py: nothing listens on {port}")
            time.sleep(0.1)
    counts = dict(frames=0, status_frames=0, events_frames=0, lines=0, dropped=0, max_lines=0)
    with ws:
        for command in commands:
            ws.send(json.dumps({"COMMAND": command}))
        while not stopping:
            try:
                frame = ws.recv(timeout=0.2)
            except TimeoutError:
                continue
            if counts["frames"] == 0:
                print("watching", flush=True)
            counts["frames"] += 1
            data = json.loads(frame)
            if "STATUS" in data:
                counts["status_frames"] += 1
            if "EVENTS" in data:
                counts["events_frames"] += 1
                counts["lines"] += len(data["EVENTS"])
                counts["dropped"] += int(data.get("DROPPED", 0))
                counts["max_lines"] = max(counts["max_lines"], len(data["EVENTS"]))
    print("PAGE " + " ".join(f"{k}={v}" for k, v in counts.items()), flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(int(sys.argv[1]), sys.argv[2:] or ["STATUS", "MONITOR"])
