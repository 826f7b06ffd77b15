#!/usr/bin/env python3
"""listeners.py URL CLIENTS PATHS OUT [--no-read STATUS...]: the WebSocket clients of
Benchmarks/listen.sh, CLIENTS connections in one process (python's `websockets`, asyncio), each
sending a LISTEN for every path in the file PATHS (one a line), then printing `ready`.

Reading (the default): each client reads every frame and counts the binary ones (OSC values);
on SIGTERM the clients close and OUT gets {"frames": [per client], "bytes": ..., "closed": ...}.
--no-read: like `oscquery-ws.py --no-read`, a 4 KiB receive buffer and a queue of 4 frames,
after which nothing more is read, so the server's queue for it fills; until SIGTERM the command
STATUS... (`aseqosc status --json ...`) is run every 0.5 s and OUT gets the seconds after
`ready` at which the bridge counted each client closed for not reading."""
import asyncio
import json
import signal
import socket
import subprocess
import sys
import time

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed


async def silent(url, paths):
    host, port = url.removeprefix("ws://").split("/")[0].rsplit(":", 1)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
    ws = await connect(url, sock=sock, max_queue=4, compression=None, max_size=None, ping_interval=None,
                       open_timeout=120)
    for path in paths:
        await ws.send(json.dumps({"COMMAND": "LISTEN", "DATA": path}))
    return ws


async def main():
    url, clients, paths_file, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    no_read = len(sys.argv) > 5 and sys.argv[5] == "--no-read"
    status = sys.argv[6:]
    with open(paths_file) as f:
        paths = [line.strip() for line in f if line.strip()]
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    result = {"clients": clients, "paths": len(paths)}
    if no_read:
        sockets = [await silent(url, paths) for _ in range(clients)]
        print("ready", flush=True)
        began, closes, seen = time.monotonic(), [], 0
        while not stop.is_set():
            state = await asyncio.to_thread(subprocess.run, status, capture_output=True, text=True)
            try:
                count = json.loads(state.stdout)["oscQuery"]["webSocket"]["closedNotReading"]
            except (ValueError, KeyError):
                count = seen
            closes += [round(time.monotonic() - began, 2)] * (count - seen)
            seen = count
            try:
                await asyncio.wait_for(stop.wait(), 0.5)
            except TimeoutError:
                pass
        result["closed_not_reading_at_s"] = closes
        for ws in sockets:
            ws.transport.abort()
    else:
        frames, sizes, closed = [0] * clients, [0] * clients, [None] * clients

        async def one(index, opened):
            async with connect(url, compression=None, max_size=None, ping_interval=None, open_timeout=120,
                               close_timeout=5) as ws:
                for path in paths:
                    await ws.send(json.dumps({"COMMAND": "LISTEN", "DATA": path}))
                opened.set_result(ws)
                try:
                    while True:
                        frame = await ws.recv()
                        if isinstance(frame, bytes):
                            frames[index] += 1
                            sizes[index] += len(frame)
                except ConnectionClosed as why:
                    closed[index] = why.rcvd.code if why.rcvd else -1
                except asyncio.CancelledError:
                    pass

        loop = asyncio.get_running_loop()
        opened = [loop.create_future() for _ in range(clients)]
        tasks = []
        for index in range(clients):   # one at a time: the server's listens in a known order
            tasks.append(asyncio.create_task(one(index, opened[index])))
            await opened[index]
        print("ready", flush=True)
        await stop.wait()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        result.update(frames=frames, bytes=sum(sizes), closed_by_server=[c for c in closed if c is not None])
    with open(out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    asyncio.run(main())
