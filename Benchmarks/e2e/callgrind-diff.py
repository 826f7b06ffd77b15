#!/usr/bin/env python3
"""Per-function instructions per event from two callgrind runs of different lengths.

    callgrind-diff.py SHORT.out SHORT_EVENTS LONG.out LONG_EVENTS [TOP]

Subtracts each function's self cost (Ir, all threads) in the short run from the long run and
divides by the difference in events, so start-up and shut-down cancel, as for the totals.
"""
import re
import subprocess
import sys


def self_costs(path):
    text = subprocess.run(
        ["callgrind_annotate", "--threshold=100", "--auto=no", "--inclusive=no", path], capture_output=True, text=True, check=True
    ).stdout
    costs = {}
    for line in text.splitlines():
        match = re.match(r"\s*([\d,]+)\s+\([\s\d.]+%\)\s+(.*)", line)
        if match and "PROGRAM TOTALS" not in line:
            name = re.sub(r" \[[^\]]*\]$", "", match.group(2))
            name = name.rsplit(":", 1)[1] if ":" in name else name
            costs[name] = costs.get(name, 0) + int(match.group(1).replace(",", ""))
    return costs


short_path, short_events, long_path, long_events = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
top = int(sys.argv[5]) if len(sys.argv) > 5 else 30
short, long = self_costs(short_path), self_costs(long_path)
events = long_events - short_events
rows = sorted(((long.get(f, 0) - short.get(f, 0)) / events, f) for f in set(short) | set(long))
rows.reverse()
total = sum(r for r, _ in rows)
print(f"{total:10.0f}  instructions per event in all ({events} events)")
for per_event, name in rows[:top]:
    demangled = subprocess.run(["swift", "demangle", "--simplified", "--compact", name.lstrip("$") if name.startswith("$s") else name], capture_output=True, text=True).stdout.strip()
    print(f"{per_event:10.1f}  {100 * per_event / total:5.1f}%  {demangled[:150] or name}")
