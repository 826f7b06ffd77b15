#!/usr/bin/env python3
"""Prints the chord runs of `Benchmarks/e2e.sh --bundles-only`: per bridge and mode, the median
over rounds of events/s, latency p50/p99 (every event of a bundle timed from its send), events
lost, and write system calls per event (the bridge's syscw from /proc/PID/io, start-up included).

    bundles.py OUT/results.txt
"""
import re
import statistics
import sys


def fields(line):
    return dict(re.findall(r"(\w+)=(\S+)", line))


def main(path):
    runs = {}
    writes = {}
    for line in open(path):
        values = fields(line)
        label = values.get("label", "")
        match = re.match(r"(\w+)\.o2m\.bundles\.(paced|window)\.\d+$", label)
        if not match:
            continue
        key = match.groups()
        if line.startswith("WRITES"):
            writes[label] = values.get("syscw", "")
        elif line.startswith("RESULT"):
            runs.setdefault(key, []).append((label, values))
    print("| bridge | mode | rounds | events/s | p50 / p99 µs | lost | writes per event |")
    print("|---|---|---|---|---|---|---|")
    for (bridge, mode), rows in sorted(runs.items()):
        def median(name):
            numbers = [float(v[name]) for _, v in rows if re.fullmatch(r"[\d.]+", v.get(name, ""))]
            return statistics.median(numbers) if numbers else None

        def show(value, digits=0):
            return "-" if value is None else f"{value:,.{digits}f}"

        per_event = [
            int(writes[label]) / int(v["sent"])
            for label, v in rows
            if writes.get(label, "").isdigit() and int(v.get("sent", 0)) > 0
        ]
        lost = sum(int(v.get("lost", 0)) for _, v in rows)
        sent = sum(int(v.get("sent", 0)) for _, v in rows)
        print(
            f"| {bridge} | {mode} | {len(rows)} | {show(median('eps'))} | "
            f"{show(median('p50_us'))} / {show(median('p99_us'))} | {lost:,} of {sent:,} | "
            f"{show(statistics.median(per_event) if per_event else None, 3)} |"
        )


if __name__ == "__main__":
    main(sys.argv[1])
