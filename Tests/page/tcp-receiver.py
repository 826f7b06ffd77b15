"""A TCP OSC receiver for scripts/test-page: accepts connections on 127.0.0.1:PORT and counts the
length-prefixed packets (OSC 1.0 framing) each brings; the test stops it with SIGTERM to see the
page's destination turn to reconnecting."""
import signal
import socket
import sys
import threading

port = int(sys.argv[1])
server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", port))
server.listen(4)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
print(f"listening on {port}", flush=True)


def serve(conn):
    buffered = b""
    while True:
        data = conn.recv(65536)
        if not data:
            print("closed", flush=True)
            return
        buffered += data
        while len(buffered) >= 4 and len(buffered) >= 4 + int.from_bytes(buffered[:4], "big"):
            size = int.from_bytes(buffered[:4], "big")
            packet, buffered = buffered[4:4 + size], buffered[4 + size:]
            print("packet", packet.split(b"\0", 1)[0].decode(errors="replace"), flush=True)


while True:
    conn, peer = server.accept()
    print("connection from", peer, flush=True)
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
