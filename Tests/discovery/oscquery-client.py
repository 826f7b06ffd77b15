"""An OSCQuery client on the other machine (the peer namespace): finds the bridge's
_oscjson._tcp service with python's zeroconf, reads its namespace over HTTP and checks it
against what the test config accepts, reads HOST_INFO, and sends OSC to advertised addresses.

    oscquery-client.py namespace NAME OUT   # writes OUT/oscquery-root.json, OUT/host-info.json
    oscquery-client.py flood HOST PORT OSC_PORT IDLE NOTES SIGNALS

`namespace` exits non-zero with the difference when the namespace is not the expected one.
`flood` sends an oversized request line, garbage and an unknown method while NOTES note-on/off
pairs go to the OSC port, holds IDLE silent connections until SIGNALS/go appears, then checks
that the server closed every one and answers again."""
import json
import os
import socket
import struct
import sys
import time
import urllib.error
import urllib.request


def osc(address, tags, *args):
    def pad(b):
        return b + b"\0" * (4 - len(b) % 4)
    out = pad(address.encode()) + pad(("," + tags).encode())
    for tag, value in zip(tags, args):
        out += struct.pack(">i", value) if tag == "i" else struct.pack(">f", value)
    return out


def find(name, seconds):
    from zeroconf import ServiceBrowser, Zeroconf
    zc = Zeroconf()
    found = {}

    class Listener:
        def add_service(self, zc, kind, full):
            info = zc.get_service_info(kind, full, timeout=10000)
            if info:
                found[full] = info
        update_service = add_service

        def remove_service(self, zc, kind, full):
            found.pop(full, None)

    ServiceBrowser(zc, ["_oscjson._tcp.local."], Listener())
    want = name + "._oscjson._tcp.local."
    deadline = time.time() + seconds
    while time.time() < deadline and want not in found:
        time.sleep(0.2)
    zc.close()
    info = found.get(want)
    if not info:
        sys.exit("no %s among %s" % (want, sorted(found)))
    return info.parsed_addresses()[0], info.port


def expected_methods():
    """What the test config accepts, written out from docs/OSC.md, not from aseqosc."""
    methods = {}
    seven, fourteen = {"MIN": 0, "MAX": 127}, {"MIN": 0, "MAX": 16383}
    kinds = {"note_on": ("ii", [seven, seven]), "note_off": ("ii", [seven, seven]),
             "poly_pressure": ("ii", [seven, seven]), "cc": ("ii", [seven, seven]),
             "program": ("i", [seven]), "pressure": ("i", [seven]),
             "pitch_bend": ("i", [{"MIN": -8192, "MAX": 8191}]),
             "cc14": ("ii", [{"MIN": 0, "MAX": 31}, fourteen]),
             "rpn": ("ii", [fourteen, fourteen]), "nrpn": ("ii", [fourteen, fourteen])}
    for channel in range(1, 17):
        for kind, typed in kinds.items():
            methods["/midi/synth/%d/%s" % (channel, kind)] = typed
    for kind, typed in {"mtc_quarter_frame": ("i", [seven]), "song_position": ("i", [fourteen]),
                        "song_select": ("i", [seven])}.items():
        methods["/midi/synth/" + kind] = typed
    for kind in ["tune_request", "clock", "start", "continue", "stop", "active_sensing", "reset"]:
        methods["/midi/synth/" + kind] = (None, None)
    channel = {"MIN": 1, "MAX": 16}
    for kind in ["note_on", "note_off", "control_change", "poly_pressure"]:
        methods["/synth/" + kind] = ("iii", [channel, seven, seven])
    methods["/synth/channel_pressure"] = ("ii", [channel, seven])
    methods["/synth/program_change"] = ("ii", [channel, seven])
    methods["/synth/pitch_bend"] = ("ii", [channel, fourteen])
    for kind in ["clock", "start", "continue", "stop", "active_sensing"]:
        methods["/synth/" + kind] = (None, None)
    methods["/synth/raw"] = ("b", [None])
    methods["/midi"] = ("m", [None])
    unit = {"MIN": 0, "MAX": 1}
    # The mappings: {n} of a fader is a controller number (0-127), of a toggle 1-4, of a pad 1-16.
    for n in range(0, 128):
        methods["/1/fader%d" % n] = ("f", [unit])
    for n in range(1, 5):
        methods["/1/toggle%d" % n] = ("f", [unit])
    for n in range(1, 17):
        methods["/2/push%d" % n] = ("f", [unit])
    methods["/3/xy"] = ("ff", [unit, None])
    return methods


def namespace(name, out):
    host, port = find(name, 30)
    base = "http://%s:%d" % (host, port)
    body = urllib.request.urlopen(base + "/").read()
    open(out + "/oscquery-root.json", "wb").write(body)
    root = json.loads(body)
    seen = {}

    # The methods whose last value the bridge keeps can be read too (ACCESS 3); the rest only
    # set. docs/OSC.md's table: the default scheme's and osmid's value-carrying methods,
    # TouchOSC's /midi, and the mapping rules that name a controller or a bend (not the pads'
    # notes, which are not kept).
    readable_default = ("cc", "cc14", "rpn", "nrpn", "program", "pressure", "pitch_bend", "poly_pressure")
    readable_osmid = ("control_change", "poly_pressure", "program_change", "channel_pressure", "pitch_bend")

    def readable(path):
        parts = path.split("/")
        if path.startswith("/midi/synth/") and len(parts) == 5:
            return parts[-1] in readable_default
        if path.startswith("/synth/"):
            return parts[-1] in readable_osmid
        return path == "/midi" or path == "/3/xy" or path.startswith("/1/fader") or path.startswith("/1/toggle")
    wrong_access = []

    def walk(node):
        if node.get("ACCESS") in (2, 3):
            path = node["FULL_PATH"]
            seen[path] = (node.get("TYPE"), node.get("RANGE"))
            want_access = 3 if readable(path) else 2
            if node["ACCESS"] != want_access:
                wrong_access.append((path, node["ACCESS"]))
        for child in node.get("CONTENTS", {}).values():
            walk(child)
    walk(root)
    want = expected_methods()
    missing, extra = sorted(set(want) - set(seen)), sorted(set(seen) - set(want))
    wrong = sorted(p for p in set(want) & set(seen) if want[p] != seen[p])
    if missing or extra or wrong or wrong_access:
        sys.exit("missing %s\nextra %s\nwrong %s\naccess %s" % (missing[:20], extra[:20],
                 [(p, want[p], seen[p]) for p in wrong[:10]], wrong_access[:10]))
    for path, access in [("/midi/synth/1/note_on", 2), ("/2/push5", 2), ("/3/xy", 3), ("/1/fader7", 3)]:
        node = json.loads(urllib.request.urlopen(base + path).read())
        assert node["FULL_PATH"] == path and node["ACCESS"] == access, node
    assert json.loads(urllib.request.urlopen(base + "/3/xy?TYPE").read()) == {"TYPE": "ff"}
    info_body = urllib.request.urlopen(base + "/anything?HOST_INFO").read()
    open(out + "/host-info.json", "wb").write(info_body)
    info = json.loads(info_body)
    assert info["NAME"] == name and info["OSC_PORT"] == 57300 and info["OSC_TRANSPORT"] == "UDP", info
    assert "OSC_IP" not in info and info["EXTENSIONS"]["ACCESS"] is True, info
    # A readable method with no value yet answers an empty object.
    assert json.loads(urllib.request.urlopen(base + "/midi/synth/1/cc?VALUE").read()) == {}
    for path, status in [("/nowhere", 404), ("/?BOGUS", 400), ("/midi/synth/1/note_on?VALUE", 204)]:
        try:
            answer = urllib.request.urlopen(base + path).status
        except urllib.error.HTTPError as error:
            answer = error.code
        assert answer == status, (path, answer)
    # No OSC_IP: the OSC input is at the HTTP server's address, on OSC_PORT.
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sender.sendto(osc("/midi/synth/3/note_on", "ii", 61, 99), (host, info["OSC_PORT"]))
    sender.sendto(osc("/2/push5", "f", 1.0), (host, info["OSC_PORT"]))
    print("namespace of %d methods checked at %s" % (len(seen), base))


def flood(host, port, osc_port, idle, notes, signals):
    """Hostile HTTP from this machine while OSC plays; SIGNALS/holding tells the test when
    this machine holds its connections, and SIGNALS/go lets them go."""
    # Fewer than one address may keep (16), so the requests below still get in.
    silent = [socket.create_connection((host, port), timeout=10) for _ in range(12)]

    def exchange(payload):
        s = socket.create_connection((host, port), timeout=10)
        s.sendall(payload)
        data = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except (ConnectionResetError, socket.timeout):
            pass
        s.close()
        return data.split(b"\r\n", 1)[0]

    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    results = []
    for i in range(notes):
        sender.sendto(osc("/midi/synth/1/note_on", "ii", 70, 100), (host, osc_port))
        sender.sendto(osc("/midi/synth/1/note_off", "ii", 70, 0), (host, osc_port))
        if i == notes // 4:
            results.append(exchange(b"GET /" + b"a" * 40000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"))
        if i == notes // 2:
            results.append(exchange(b"\x16\x03\x01\x02\x00garbage\r\n\r\n"))
        if i == 3 * notes // 4:
            results.append(exchange(b"PUT / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
        time.sleep(0.005)
    print("answers:", results)
    # libwebsockets closes a request whose headers overflow its limit without a status line.
    assert results[0] == b"" or results[0].split(b" ")[1] in (b"413", b"414", b"431"), results
    assert results[2].startswith(b"HTTP/1.1 405"), results
    # Then many more than one address may keep: those past the limit are closed at once.
    silent += [socket.create_connection((host, port), timeout=10) for _ in range(idle - len(silent))]
    open(signals + "/holding", "w").close()
    deadline = time.time() + 30
    while not os.path.exists(signals + "/go") and time.time() < deadline:
        time.sleep(0.1)
    # The server closes each silent connection at its idle limit (5 s): the client reads the end.
    for s in silent:
        s.settimeout(15)
        try:
            assert s.recv(1) == b"", "a silent connection got data"
        except ConnectionResetError:
            pass
        s.close()
    deadline = time.time() + 15
    while True:
        try:
            info = json.loads(urllib.request.urlopen("http://%s:%d/?HOST_INFO" % (host, port), timeout=5).read())
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.2)
    assert info["OSC_PORT"] == osc_port, info
    print("%d silent connections closed; the server answers again" % idle)


if __name__ == "__main__":
    if sys.argv[1] == "namespace":
        namespace(sys.argv[2], sys.argv[3])
    else:
        flood(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), sys.argv[7])
