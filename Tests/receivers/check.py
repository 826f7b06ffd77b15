#!/usr/bin/env python3
"""check.py OUT: the assertions of scripts/test-receivers, on the logs in-vm.sh left in OUT.

Prints one `ok - NAME` or `not ok - NAME` (with the evidence) per check and
`receivers: N passed, M failed`; exits 1 when a check failed.
"""
import array
import os
import re
import sys

out = sys.argv[1]
examples = os.path.join(os.path.dirname(__file__), "..", "..", "Config", "examples", "receivers")
results = []


def read(name):
    try:
        with open(os.path.join(out, name), errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def check(name, passed, evidence=""):
    results.append(passed)
    print(("ok - " if passed else "not ok - ") + name)
    if not passed and evidence:
        for line in evidence.rstrip().splitlines()[-12:]:
            print("    " + line)


events = read("events.txt")
oscdump = read("oscdump.txt")
played = "PLAYED" in events

# What aseqosc sent for '90 3C 64 80 3C 00 B0 07 64 E1 00 20 C0 05' (oscdump -L: time address types args).
sent = []
for line in oscdump.splitlines():
    parts = line.split()
    if len(parts) >= 2 and parts[1].startswith("/"):
        types = parts[2] if len(parts) > 2 and not parts[2].lstrip("-").isdigit() else ""
        sent.append((parts[1], types, parts[3:] if types else parts[2:]))
expected = [
    ("/midi/in/1/note_on", "ii", ["60", "100"]),
    ("/midi/in/1/note_off", "ii", ["60", "0"]),
    ("/midi/in/1/cc", "ii", ["7", "100"]),
    ("/midi/in/2/pitch_bend", "i", ["-4096"]),
    ("/midi/in/1/program", "i", ["5"]),
]
check("aseqosc sent the MIDI played into virmidi as OSC (oscdump on sclang's port 57120)",
      played and sent == expected, events + oscdump + read("aseqosc.log"))

# The thread that sends MIDI -> OSC to these receivers on this machine stays on one CPU, the
# VM's last (datagrams to this machine sent from two CPUs can overtake each other in the kernel);
# every other thread, and every thread of the bridge with no OSC destination, may run anywhere.
threads = read("threads.txt")
online = re.search(r"^online (\S+)", threads, re.M)
every_cpu = online.group(1) if online else None   # no threads.txt: the check fails, not the script
last_cpu = every_cpu.split("-")[-1].split(",")[-1] if every_cpu else None
placement = [line.split() for line in threads.splitlines() if not line.startswith("online")]
sending = {("receivers", "aseqosc-input")}
wrong = [" ".join(p) for p in placement if len(p) == 3 and
         p[2] != (last_cpu if (p[0], p[1]) in sending else every_cpu)]
check(f"the receivers bridge keeps its input thread on CPU {last_cpu}, nothing else pinned",
      every_cpu is not None and last_cpu != every_cpu and
      sum((p[0], p[1]) in sending for p in placement if len(p) == 3) == 1 and not wrong,
      threads + "\n".join("wrong: " + w for w in wrong) + "\n" + read("aseqosc.log"))

# SuperCollider: every address aseqosc sent has an OSCdef in supercollider.scd with its type tags.
scd = open(os.path.join(examples, "supercollider.scd")).read()
port = re.search(r'^~port = "([^"]*)";', scd, re.M)
handled = dict(re.findall(r'^\s*\[\\(\w+), "(\w*)", \{', scd, re.M))
problems = []
if '"/midi/%/%/%".format(~port, ch, type)' not in scd or "(1..16).do" not in scd:
    problems.append("supercollider.scd no longer builds /midi/{port}/{1..16}/{type}")
for address, types, _ in sent:
    m = re.fullmatch(r"/midi/([^/]+)/(\d+)/(\w+)", address)
    if not m:
        problems.append(f"{address}: not /midi/port/channel/type")
    elif not port or m.group(1) != port.group(1):
        problems.append(f"{address}: the .scd's ~port is {port.group(1) if port else 'missing'}")
    elif not 1 <= int(m.group(2)) <= 16:
        problems.append(f"{address}: channel outside 1..16")
    elif m.group(3) not in handled:
        problems.append(f"{address}: no OSCdef for {m.group(3)} (has {', '.join(handled)})")
    elif handled[m.group(3)] != types:
        problems.append(f"{address}: sent ,{types}, the .scd expects ,{handled[m.group(3)]}")
check("supercollider.scd has an OSCdef for each address and type tag string aseqosc sent",
      bool(sent) and not problems, "\n".join(problems))

# Pure Data: [print] lines on stderr, "name: channel args...".
pd = read("pd.log")
for name, line in [("note-on", "note_on: 1 60 100"), ("note-off", "note_off: 1 60 0"),
                   ("cc", "cc: 1 7 100"), ("pitch bend", "pitch_bend: 2 -4096"),
                   ("program change", "program: 1 5")]:
    check(f"puredata.pd printed the {name} ({line})", line in pd.splitlines(), pd)

# python-osc.
py = read("python-osc.log")
for name, line in [("note-on", "note_on  in ch 1 note 60 velocity 100"),
                   ("note-off", "note_off in ch 1 note 60 velocity 0"),
                   ("cc", "cc       in ch 1 controller 7 value 100"),
                   ("pitch bend", "bend     in ch 2 -4096"),
                   ("program change", "program  in ch 1 5")]:
    check(f"python-osc-receiver.py printed the {name} ({line.split()[0]} ...)", line in py.splitlines(), py)

# fluidsynth: the binding by name, then the samples rendered while the note played.
fluid_log = read("aseqosc-fluidsynth.log")
check("fluidsynth.json5: aseqosc bound its output 'fluidsynth' to FLUID Synth by name",
      re.search(r"bound to .*FLUID Synth", fluid_log) is not None, fluid_log + read("fluidsynth.log"))
note = re.search(r"NOTE before=(\d+) after=(\d+)", events)
peak_before = peak_during = None
if note:
    before, after = int(note.group(1)), int(note.group(2))
    with open(os.path.join(out, "fluidsynth.raw"), "rb") as f:
        raw = f.read(after)
    def peak(data):
        samples = array.array("h")
        samples.frombytes(data[: len(data) // 2 * 2])
        return max((abs(s) for s in samples), default=0)
    peak_before = peak(raw[max(0, before - 44100 * 4 // 2) // 4 * 4: before])   # the 0.5 s before
    peak_during = peak(raw[before // 4 * 4: after])
check("fluidsynth was silent before the OSC note (peak of the 0.5 s before: "
      f"{peak_before if peak_before is not None else 'not measured'})",
      peak_before is not None and peak_before < 100, events + read("fluidsynth.log"))
check("oscsend /midi/fluidsynth/1/note_on to aseqosc played on fluidsynth (peak while it sounded: "
      f"{peak_during if peak_during is not None else 'not measured'} of 32767)",
      peak_during is not None and peak_during > 1000, events + fluid_log + read("fluidsynth.log"))

check("both aseqosc bridges stopped cleanly (exit 0 on SIGTERM)",
      "EXIT aseqosc 0" in events and "EXIT aseqosc-fluidsynth 0" in events, events)

passed = sum(results)
print(f"receivers: {passed} passed, {len(results) - passed} failed")
sys.exit(0 if passed == len(results) else 1)
