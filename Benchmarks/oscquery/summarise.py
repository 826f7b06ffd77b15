#!/usr/bin/env python3
"""Summarises a Benchmarks/oscquery.sh run: per bridge and condition (quiet, flood) the median
paced p50 and p99 over the rounds, and the flood/quiet ratios.

    summarise.py RESULTS_TXT
"""
import re
import statistics
import sys


def main(path):
    runs = {}
    for line in open(path):
        fields = dict(re.findall(r"(\w+)=(\S+)", line))
        if "p50_us" not in fields:
            continue
        bridge, condition, _ = fields["label"].split(".")
        runs.setdefault((bridge, condition), []).append(fields)
    print("| bridge | quiet p50 / p99 µs | flooded p50 / p99 µs | flooded / quiet p50, p99 | lost (quiet, flooded) |")
    print("|---|---|---|---|---|")
    for bridge in ["aseqosc", "o2m"]:
        quiet, flood = runs.get((bridge, "quiet"), []), runs.get((bridge, "flood"), [])
        if not quiet or not flood:
            continue
        def median(rows, key):
            values = [int(r[key]) for r in rows if r[key].isdigit()]
            return statistics.median(values) if values else float("nan")
        q50, q99, f50, f99 = median(quiet, "p50_us"), median(quiet, "p99_us"), median(flood, "p50_us"), median(flood, "p99_us")
        lost = (sum(int(r["lost"]) for r in quiet), sum(int(r["lost"]) for r in flood))
        print("| %s | %d / %d | %d / %d | %.2f, %.2f | %d, %d |" % (bridge, q50, q99, f50, f99, f50 / q50, f99 / q99, *lost))


if __name__ == "__main__":
    main(sys.argv[1])
