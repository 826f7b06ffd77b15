#!/usr/bin/env python3
"""summarise.py RESULTS: the TCP/UDP table of Benchmarks/tcp.sh from loadgen's RESULT lines.

Each label is MODE-A-B-ROUND.SIDE.PROTOCOL; a pair's two lines share MODE-A-B-ROUND, so each
ratio is TCP over UDP within one run (both bridges met the same VM), and the table gives the
median of those ratios beside the median values."""
import statistics
import sys
from collections import defaultdict

runs = defaultdict(dict)
for line in open(sys.argv[1]):
    if not line.startswith("RESULT "):
        continue
    fields = dict(part.split("=", 1) for part in line.split()[1:] if "=" in part)
    label = fields.get("label", "")
    if "failed" in line or label.count(".") != 2:
        print(f"failed: {line.strip()}")
        continue
    run, _side, protocol = label.split(".")
    runs[run][protocol] = fields

def median(values):
    return statistics.median(values) if values else float("nan")

rows = []
# Windowed, the generator takes turns, so both lines' eps are the pair's; overlap_eps is what each
# bridge delivered while both ran.
for mode, metrics in (("paced", ("p50_us", "p99_us")), ("window", ("overlap_eps", "p50_us"))):
    for metric in metrics:
        pairs = [r for name, r in runs.items() if name.startswith(mode + "-") and "udp" in r and "tcp" in r]
        pairs = [r for r in pairs if metric in r["udp"] and metric in r["tcp"]]
        udp = [float(r["udp"][metric]) for r in pairs]
        tcp = [float(r["tcp"][metric]) for r in pairs]
        ratios = [t / u for t, u in zip(tcp, udp) if u > 0]
        rows.append((mode, metric, median(udp), median(tcp), median(ratios), len(pairs)))

print("| run | measure | UDP (median) | TCP (median) | TCP/UDP (median of same-run ratios) | runs |")
print("|---|---|---|---|---|---|")
for mode, metric, udp, tcp, ratio, count in rows:
    print(f"| {mode} | {metric} | {udp:.0f} | {tcp:.0f} | {ratio:.2f} | {count} |")
lost = [(name, p, r["lost"]) for name, run in runs.items() for p, r in run.items() if r.get("lost", "0") != "0"]
print("lost: " + (", ".join(f"{n} {p} {l}" for n, p, l in lost) if lost else "none"))
