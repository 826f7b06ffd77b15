#!/usr/bin/env python3
"""Turns e2e.sh's results.txt into the Markdown tables BENCHMARKS.md shows: ratios first."""
import sys
from pathlib import Path

out = Path(sys.argv[1] if len(sys.argv) > 1 else ".build/bench")
runs, counts = {}, {}
for line in (out / "results.txt").read_text().splitlines():
    kind, _, rest = line.partition(" ")
    fields = dict(f.split("=", 1) for f in rest.split() if "=" in f)
    if kind == "RESULT":
        runs[fields["label"]] = fields
    elif kind == "CALLGRIND":
        counts.setdefault(fields["label"], {})[int(fields["events"])] = fields["ir"]


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def per_event(label):
    """Instructions per event: the Ir difference between the long and the short run."""
    runs_by_size = counts.get(label, {})
    if len(runs_by_size) < 2:
        return None
    small, large = sorted(runs_by_size)
    a, b = number(runs_by_size[small]), number(runs_by_size[large])
    return None if a is None or b is None else (b - a) / (large - small)


def fmt(value, digits=0):
    return "-" if value is None else f"{value:,.{digits}f}"


def ratio(a, b):
    return "-" if a is None or b is None or b == 0 else f"{a / b:.3g}"


print((out / "machine.txt").read_text())
for direction, peer, bridges in (("m2o", "m2o", ["aseqosc", "m2o", "bare"]), ("o2m", "o2m", ["aseqosc", "o2m", "bare"])):
    present = [b for b in bridges if f"{b}.{direction}.window" in runs or f"{b}.{direction}" in counts]
    if not present:
        continue
    title = "MIDI -> OSC" if direction == "m2o" else "OSC -> MIDI"
    ir = {b: per_event(f"{b}.{direction}") for b in present}
    cpu = {b: number(runs.get(f"{b}.{direction}.window", {}).get("cpu_us_per_event")) for b in present}
    eps = {b: number(runs.get(f"{b}.{direction}.window", {}).get("eps")) for b in present}
    p50 = {b: number(runs.get(f"{b}.{direction}.paced", {}).get("p50_us")) for b in present}
    p99 = {b: number(runs.get(f"{b}.{direction}.paced", {}).get("p99_us")) for b in present}
    print(f"### {title}: ratios (same VM run)\n")
    if "aseqosc" not in present:
        print("aseqosc: not measured yet (its OSC -> MIDI path is not on main; see the TODO in in-vm.sh).\n")
    print(f"| measure | aseqosc / {peer} | aseqosc / bare | {peer} / bare |")
    print("|---|---|---|---|")
    for name, values in (("instructions per event (callgrind)", ir), ("CPU time per event", cpu),
                         ("windowed events/s", eps), ("paced latency p50 (after the warm-up)", p50),
                         ("paced latency p99 (after the warm-up)", p99)):
        a, p, b = values.get("aseqosc"), values.get(peer), values.get("bare")
        print(f"| {name} | {ratio(a, p)} | {ratio(a, b)} | {ratio(p, b)} |")
    print()
    print(f"### {title}: absolute numbers (indicative: VM under software emulation)\n")
    print("| bridge | instr/event | CPU µs/event | RSS (VmHWM) | windowed events/s (lost) | "
          "paced p50 / p99 / max µs (lost) | paced first event µs | windowed p50 / p99 µs |")
    print("|---|---|---|---|---|---|---|---|")
    for b in present:
        w = runs.get(f"{b}.{direction}.window", {})
        p = runs.get(f"{b}.{direction}.paced", {})
        hwm = number(w.get("hwm_kb"))
        print(f"| {b} | {fmt(ir[b])} | {w.get('cpu_us_per_event', '-')} | "
              f"{'-' if hwm is None else f'{hwm / 1024:.1f} MiB'} | {fmt(number(w.get('eps')))} ({w.get('lost', '-')}) | "
              f"{p.get('p50_us', '-')} / {p.get('p99_us', '-')} / {p.get('max_us', '-')} ({p.get('lost', '-')}) | "
              f"{p.get('first_us', '-')} | {w.get('p50_us', '-')} / {w.get('p99_us', '-')} |")
    print()
    raw = [f"{b}: {counts[f'{b}.{direction}']}" for b in present if f"{b}.{direction}" in counts]
    if raw:
        print("callgrind totals (Ir by events sent): " + "; ".join(raw) + "\n")
