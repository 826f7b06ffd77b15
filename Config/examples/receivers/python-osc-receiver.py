#!/usr/bin/env python3
"""Print the notes, controllers and pitch bends aseqosc sends (its `default` scheme).

    python3 -m pip install python-osc
    python3 python-osc-receiver.py [--host 127.0.0.1] [--port 57122]

Run aseqosc with a destination { host: "127.0.0.1", port: 57122, scheme: "default" }
(to-receivers.json5 in this folder has one) and play a note; this prints

    note_on  in ch 1 note 60 velocity 100
    note_off in ch 1 note 60 velocity 0
    cc       in ch 1 controller 7 value 100

Addresses (docs/OSC.md): /midi/{port}/{channel}/note_on ,ii note velocity, .../note_off ,ii,
.../cc ,ii controller value, .../pitch_bend ,i -8192..8191, .../program ,i.
"""
import argparse

from pythonosc.dispatcher import Dispatcher
from pythonosc.osc_server import BlockingOSCUDPServer


def split(address):
    """'/midi/in/1/note_on' -> ('in', 1); the port name never contains '/'."""
    _, _, port, channel, _ = address.split("/")
    return port, int(channel)


def note(address, note, velocity):
    port, channel = split(address)
    kind = address.rsplit("/", 1)[1]
    print(f"{kind:8} {port} ch {channel} note {note} velocity {velocity}", flush=True)


def control_change(address, controller, value):
    port, channel = split(address)
    print(f"cc       {port} ch {channel} controller {controller} value {value}", flush=True)


def pitch_bend(address, bend):
    port, channel = split(address)
    print(f"bend     {port} ch {channel} {bend:+d}", flush=True)


def program(address, number):
    port, channel = split(address)
    print(f"program  {port} ch {channel} {number}", flush=True)


def other(address, *args):
    print(f"other    {address} {' '.join(map(str, args))}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=57122)
    options = parser.parse_args()

    dispatcher = Dispatcher()
    dispatcher.map("/midi/*/*/note_on", note)
    dispatcher.map("/midi/*/*/note_off", note)
    dispatcher.map("/midi/*/*/cc", control_change)
    dispatcher.map("/midi/*/*/pitch_bend", pitch_bend)
    dispatcher.map("/midi/*/*/program", program)
    dispatcher.set_default_handler(other)

    server = BlockingOSCUDPServer((options.host, options.port), dispatcher)
    print(f"listening on {options.host}:{options.port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
