#!/usr/bin/env python3
"""trace-segments.py: where a paced message's time goes, from the kernel traces that
`Benchmarks/e2e.sh --trace-only` records (system call entries and exits, wake-ups, context
switches) of paired runs of aseqosc and the bare forwarder.

    trace-segments.py TRACE...   (files named trace.m2o.N.txt or trace.o2m.N.txt)

Each message is followed from the generator's send to its receive of what the bridge made of
it, in steps:

    send      the generator's send (o2m: `sendto` of the OSC; m2o: `write` of the ALSA event)
    wake      the bridge is woken (in the sender's system call)
    switch    the vCPU switches to the bridge
    in        the bridge's waiting system call returns (its receive, or its `poll`)
    out       the bridge enters its sending system call (o2m: the MIDI `write`; m2o: the UDP send)
    out-done  that call returns
    next      the bridge enters its next system call (the next wait, or a read before it)
    back      the vCPU switches back to the generator
    received  the generator's receive of the result returns

`in -> out` and `out-done -> next` are the bridge's user mode (plus, in `in -> out`, any other
system calls it makes on the way, counted apart); the rest is the kernel's. For each bridge the
table gives the median of each step over the messages, and the median of the whole.
"""
import re
import statistics
import sys
from collections import defaultdict

STEPS = ["send", "wake", "switch", "in", "out", "out-done", "next", "back", "received"]
LINE = re.compile(r"\s*(\S+)-(\d+)\s+\[\d+\]\s+\S+\s+([\d.]+): (\w+): (.*)")
# The bridge's sending call: write (o2m); sendto, sendmsg or sendmmsg (m2o).
OUT_CALLS = {"o2m": {"1"}, "m2o": {"44", "46", "307"}}


def events(path):
    with open(path) as trace:
        for line in trace:
            match = LINE.match(line)
            if match:
                comm, _pid, time, kind, rest = match.groups()
                yield comm.startswith("loadgen"), float(time) * 1e6, kind, rest


def messages(path, direction):
    """Each complete message's step times, with the bridge (comm and pid) that carried it."""
    current = None
    for from_generator, time, kind, rest in events(path):
        number = rest.split()[1] if kind.startswith("sys_") else None
        if from_generator and kind == "sys_enter":
            sends = (direction == "o2m" and number == "44") or (direction == "m2o" and rest.startswith("NR 1 (3,"))
            if sends:
                current = {"send": time, "other_calls": 0}
                continue
        if current is None:
            continue
        if "wake" not in current:
            if kind == "sched_wakeup" and "comm=loadgen" not in rest:
                current["wake"] = time
                current["bridge"] = " ".join(rest.split()[:2]).replace("comm=", "")
        elif "switch" not in current:
            if kind == "sched_switch" and "prev_comm=loadgen" in rest:
                current["switch"] = time
        elif "in" not in current:
            if not from_generator and kind == "sys_exit":
                current["in"] = time
        elif "out" not in current:
            if not from_generator and kind == "sys_enter":
                if number in OUT_CALLS[direction]:
                    current["out"] = time
                else:
                    current["other_calls"] += 1
        elif "out-done" not in current:
            if not from_generator and kind == "sys_exit":
                current["out-done"] = time
        elif "next" not in current:
            if not from_generator and kind == "sys_enter":
                current["next"] = time
        elif "back" not in current:
            if kind == "sched_switch" and "next_comm=loadgen" in rest:
                current["back"] = time
        elif from_generator and kind == "sys_exit" and not rest.endswith("= -11"):
            received = (direction == "o2m" and number == "0") or (direction == "m2o" and number == "45")
            if received:
                current["received"] = time
                yield current
                current = None


def main(paths):
    by_direction = defaultdict(lambda: defaultdict(list))
    for path in paths:
        match = re.search(r"trace\.(m2o|o2m)\.", path)
        if not match:
            sys.exit(f"trace-segments.py: {path}: not a trace.m2o.N.txt or trace.o2m.N.txt")
        direction = match.group(1)
        for message in messages(path, direction):
            name = message["bridge"].split()[0]
            kind = "aseqosc" if name.startswith("aseqosc") else "bare" if name.startswith("bare") else name
            by_direction[direction][kind].append(message)
    for direction, bridges in sorted(by_direction.items()):
        title = "MIDI -> OSC" if direction == "m2o" else "OSC -> MIDI"
        print(f"\n{title}: median µs per step (messages: "
              + ", ".join(f"{kind} {len(found)}" for kind, found in sorted(bridges.items())) + ")")
        kinds = [kind for kind in ("aseqosc", "bare") if kind in bridges]
        print("| step | where | " + " | ".join(kinds) + (" | difference |" if len(kinds) == 2 else " |"))
        print("|---|---|" + "---|" * (len(kinds) + (1 if len(kinds) == 2 else 0)))
        rows = list(zip(STEPS, STEPS[1:])) + [("send", "received")]
        for first, second in rows:
            where = "user" if (first, second) in (("in", "out"), ("out-done", "next")) else "kernel"
            if (first, second) == ("send", "received"):
                where = "all"
            medians = [statistics.median(m[second] - m[first] for m in bridges[kind]) for kind in kinds]
            cells = " | ".join(f"{value:.0f}" for value in medians)
            difference = f" | {medians[0] - medians[1]:+.0f}" if len(medians) == 2 else ""
            print(f"| {first} -> {second} | {where} | {cells}{difference} |")
        calls = " | ".join(f"{statistics.mean(m['other_calls'] for m in bridges[kind]):.1f}" for kind in kinds)
        print(f"| other system calls between in and out | | {calls} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
