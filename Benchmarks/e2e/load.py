#!/usr/bin/env python3
"""Prints the load runs of `Benchmarks/e2e.sh --load-only`: per bridge, the median over rounds of
paced latency p50/p99 unloaded and with a CPU hog (a busy loop at normal priority on the VM's
one CPU), and the median of each round's hog/unloaded ratio (same round, same VM: the only
comparison that holds under emulation). Ends with the goal: aseqosc's p99 under the hog within
1.5x of its unloaded p99.

    load.py OUT
"""
import os
import re
import statistics
import sys

BRIDGES = [
    ("aseqosc", "aseqosc, real-time threads (SCHED_FIFO 4)"),
    ("aseqosc-nort", "aseqosc, `realtime: false`"),
    ("aseqosc-unpinned", "aseqosc, real-time threads, `realtime.cpu: false`"),
    ("m2o", "m2o (osmid)"),
    ("bare", "bare forwarder (C)"),
]


def fields(line):
    return dict(re.findall(r"(\w+)=(\S+)", line))


def main(out):
    runs = {}
    hog_ticks = []
    for line in open(os.path.join(out, "results.txt")):
        values = fields(line)
        match = re.match(r"([\w-]+)\.m2o\.load\.(idle|hog)\.(\d+)$", values.get("label", ""))
        if not match:
            continue
        bridge, load, round_ = match.groups()
        if line.startswith("HOG"):
            hog_ticks.append(int(values.get("ticks", "0")))
        elif line.startswith("RESULT") and "p50_us" in values:
            runs.setdefault(bridge, {}).setdefault(int(round_), {})[load] = values

    def median(numbers):
        return statistics.median(numbers) if numbers else None

    def show(value, digits=0, suffix=""):
        return "-" if value is None else f"{value:,.{digits}f}{suffix}"

    print("| bridge | rounds | unloaded p50 / p99 µs | with the hog p50 / p99 µs | hog/unloaded p50 | hog/unloaded p99 | lost (hog) |")
    print("|---|---|---|---|---|---|---|")
    goal = None
    for key, name in BRIDGES:
        rounds = runs.get(key, {})
        pairs = [r for r in rounds.values() if "idle" in r and "hog" in r]

        def stat(load, field):
            return median([float(r[load][field]) for r in pairs])

        def ratio(field):
            return median([float(r["hog"][field]) / float(r["idle"][field]) for r in pairs if float(r["idle"][field]) > 0])

        if not pairs:
            continue  # not in this run (LOAD_BRIDGES)
        lost = sum(int(r["hog"].get("lost", 0)) for r in pairs)
        p99_ratio = ratio("p99_us")
        if key == "aseqosc":
            goal = p99_ratio
        print(
            f"| {name} | {len(pairs)} | {show(stat('idle', 'p50_us'))} / {show(stat('idle', 'p99_us'))} "
            f"| {show(stat('hog', 'p50_us'))} / {show(stat('hog', 'p99_us'))} "
            f"| {show(ratio('p50_us'), 2, 'x')} | {show(p99_ratio, 2, 'x')} | {lost} |"
        )
    if hog_ticks:
        # utime + stime from /proc/PID/stat, in USER_HZ (100 a second on Linux).
        print(
            f"\nthe hog used {min(hog_ticks) / 100:.1f}-{max(hog_ticks) / 100:.1f} s of CPU per loaded run "
            "(a run is about 2 s of events after the bridge's start): it had the CPU whenever nothing else did"
        )
    if goal is not None:
        verdict = "met" if goal <= 1.5 else "NOT met"
        print(f"goal (aseqosc's p99 under the hog within 1.5x of unloaded): {goal:.2f}x, {verdict}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".build/bench")
