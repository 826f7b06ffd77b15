#!/usr/bin/env python3
"""Summarises an `e2e.sh --against` run: per direction, each pair's paced p50 and p99 ratio
(this build / the other build, both paced at once by one generator) and their medians.

    against.py RESULTS_TXT
"""
import re
import statistics
import sys


def main(path):
    runs = {}
    for line in open(path):
        if not line.startswith("RESULT "):
            continue
        fields = dict(re.findall(r"(\w+)=(\S+)", line))
        if "p50_us" in fields:
            runs[fields["label"]] = fields
    failed = [label for label, fields in runs.items() if fields.get("lost", "0") != "0"]
    for direction, title in (("m2o", "MIDI -> OSC"), ("o2m", "OSC -> MIDI")):
        pairs = []
        for label, this in sorted(runs.items()):
            if not label.startswith(f"aseqosc.{direction}.ab."):
                continue
            other = runs.get("other" + label[len("aseqosc"):])
            # A pair where events were lost has no percentiles (it is listed at the end).
            if other and this["p50_us"] != "-" and other["p50_us"] != "-":
                pairs.append((label, int(this["p50_us"]) / int(other["p50_us"]),
                              int(this["p99_us"]) / int(other["p99_us"])))
        if not pairs:
            continue
        print(f"{title}: this build / the other, paired paced ({len(pairs)} pairs)")
        for label, p50, p99 in pairs:
            print(f"  {label}: p50 {p50:.3f}, p99 {p99:.3f}")
        p50s = [p50 for _, p50, _ in pairs]
        print(f"  median p50 {statistics.median(p50s):.3f} ({min(p50s):.3f}-{max(p50s):.3f}, "
              f"{sum(r < 1 for r in p50s)} of {len(p50s)} below 1), "
              f"median p99 {statistics.median(p99 for _, _, p99 in pairs):.3f}")
    if failed:
        print("runs that lost events: " + ", ".join(failed))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
