#!/usr/bin/env python3
"""Summarises a Benchmarks/page.sh run: per direction and placement, each pair's paced p50 and p99 ratio
(the instance a page watched / the one nobody watched, both paced at once by one generator),
their medians, each side's median p50 / p99, and what the page received.

    summarise.py RESULTS_TXT
"""
import re
import statistics
import sys


def main(path):
    runs, pages = {}, {}
    for line in open(path):
        fields = dict(re.findall(r"(\w+)=(\S+)", line))
        if line.startswith("RESULT ") and "label" in fields:
            runs[fields["label"]] = fields
        elif line.startswith("PAGE ") and "label" in fields:
            pages[fields["label"]] = fields
    rows = []
    cases = sorted({label.split(".")[1] for label in runs}, key=lambda case: (case[:3] != "m2o", case))
    for case in cases:
        direction, _, placement = case.partition("-")
        title = {"m2o": "MIDI -> OSC", "o2m": "OSC -> MIDI"}[direction] + (f", server {placement}" if placement else "")
        pairs, lost = [], []
        for label, watched in sorted(runs.items()):
            if not label.startswith(f"watched.{case}."):
                continue
            closed = runs.get("closed" + label[len("watched"):])
            if not closed:
                continue
            if watched.get("p50_us", "-") == "-" or closed.get("p50_us", "-") == "-":
                lost.append(label)
                continue
            pairs.append((label, watched, closed))
        if not pairs:
            print(f"{title}: no pair without loss ({', '.join(lost) or 'no runs'})")
            continue
        print(f"{title}: watched / closed, paired paced ({len(pairs)} pairs)")
        p50s, p99s = [], []
        for label, watched, closed in pairs:
            p50 = int(watched["p50_us"]) / int(closed["p50_us"])
            p99 = int(watched["p99_us"]) / int(closed["p99_us"])
            p50s.append(p50)
            p99s.append(p99)
            page = pages.get(label, {})
            print(f"  {label}: p50 {p50:.3f} ({watched['p50_us']} / {closed['p50_us']} us), "
                  f"p99 {p99:.3f} ({watched['p99_us']} / {closed['p99_us']} us), "
                  f"eps {watched['eps']} / {closed['eps']}; page: {page.get('lines', '?')} lines, "
                  f"{page.get('dropped', '?')} dropped of {page.get('tapped', '?')}")
        if lost:
            print(f"  pairs that lost events: {', '.join(lost)}")
        med = lambda side, key: statistics.median(int(p[side][key]) for p in pairs)
        page_rows = [pages[label] for label, _, _ in pairs if label in pages and "lines" in pages[label]]
        lines = statistics.median(int(p["lines"]) for p in page_rows) if page_rows else float("nan")
        dropped = statistics.median(int(p["dropped"]) for p in page_rows) if page_rows else float("nan")
        events = int(page_rows[0]["tapped"]) if page_rows else 0
        rows.append((title, statistics.median(p50s), min(p50s), max(p50s), sum(r < 1 for r in p50s), len(p50s),
                     statistics.median(p99s), med(1, "p50_us"), med(1, "p99_us"), med(2, "p50_us"),
                     med(2, "p99_us"), lines, dropped, events))
    print()
    print("| | watched / closed p50 (range, below 1) | p99 | watched p50 / p99 us | closed p50 / p99 us "
          "| page lines received / events dropped, of entries tapped (median) |")
    print("|---|---|---:|---|---|---|")
    for (title, p50, low, high, below, n, p99, w50, w99, c50, c99, lines, dropped, events) in rows:
        print(f"| {title} | **{p50:.3f}** ({low:.3f}-{high:.3f}, {below} of {n}) | {p99:.3f} | "
              f"{w50:.0f} / {w99:.0f} | {c50:.0f} / {c99:.0f} | {lines:,.0f} / {dropped:,.0f} of {events:,} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
