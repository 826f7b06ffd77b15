#!/usr/bin/env python3
"""Turns e2e.sh's results.txt into the Markdown tables BENCHMARKS.md shows: ratios first.

With --rounds N the paced and windowed runs were made N times, the bridges taking turns in each
round (labels BRIDGE.DIRECTION.MODE, then BRIDGE.DIRECTION.MODE.2, ...). A ratio is taken within
each round, where the bridges ran under the same conditions, and the tables give the median of
those; absolute numbers are medians over the rounds."""
import statistics
import sys
from pathlib import Path

out = Path(sys.argv[1] if len(sys.argv) > 1 else ".build/bench")
runs, counts = {}, {}  # runs: "bridge.direction.mode" -> {round: fields}
for line in (out / "results.txt").read_text().splitlines():
    kind, _, rest = line.partition(" ")
    fields = dict(f.split("=", 1) for f in rest.split() if "=" in f)
    if kind == "RESULT":
        parts = fields["label"].split(".")
        round_number = 1
        if len(parts) == 4 and parts[3].isdigit():
            round_number, parts = int(parts[3]), parts[:3]
        runs.setdefault(".".join(parts), {})[round_number] = fields
    elif kind == "CALLGRIND":
        counts.setdefault(fields["label"], {})[int(fields["events"])] = fields["ir"]
rounds = sorted({r for by_round in runs.values() for r in by_round} or {1})


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


def field(bridge, direction, mode, name, round_number):
    return number(runs.get(f"{bridge}.{direction}.{mode}", {}).get(round_number, {}).get(name))


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def median_field(bridge, direction, mode, name):
    return median(field(bridge, direction, mode, name, r) for r in rounds)


def round_ratio(a, b, direction, mode, name, round_number):
    """a's value divided by b's in the same round, or None."""
    x, y = field(a, direction, mode, name, round_number), field(b, direction, mode, name, round_number)
    return x / y if x is not None and y else None


def same_round_ratio(a, b, direction, mode, name):
    """The median over rounds of a's value divided by b's in the same round."""
    return median(round_ratio(a, b, direction, mode, name, r) for r in rounds)


def fmt(value, digits=0):
    return "-" if value is None else f"{value:,.{digits}f}"


def ratio_text(value):
    return "-" if value is None else f"{value:.3g}"


machine = (out / "machine.txt").read_text()
print(machine)
# e2e.sh --here runs on the machine's own sequencer: no emulator to qualify the numbers with.
native = "where: this machine's sequencer" in machine
run_kind = "run" if native else "VM run"
absolute_note = "this machine" if native else "indicative: VM under software emulation"
measures = (("CPU time per event", "window", "cpu_us_per_event"), ("windowed events/s", "window", "eps"),
            ("paced latency p50 (after the warm-up)", "paced", "p50_us"),
            ("paced latency p99 (after the warm-up)", "paced", "p99_us"),
            ("paired with bare, paced latency p50", "paired", "p50_us"),
            ("paired with bare, paced latency p99", "paired", "p99_us"),
            ("paired with bare, windowed events/s while both ran", "pairwindow", "overlap_eps"))
for direction, peer, bridges in (("m2o", "m2o", ["aseqosc", "m2o", "bare"]), ("o2m", "o2m", ["aseqosc", "o2m", "bare"])):
    present = [b for b in bridges if f"{b}.{direction}.window" in runs or f"{b}.{direction}" in counts]
    if not present:
        continue
    title = "MIDI -> OSC" if direction == "m2o" else "OSC -> MIDI"
    ir = {b: per_event(f"{b}.{direction}") for b in present}
    taken = [r for r in rounds if any(field(b, direction, mode, "p50_us", r) for b in present
                                      for mode in ("paced", "paired"))]
    over = f", median over {len(taken)} rounds" if len(taken) > 1 else ""
    print(f"### {title}: ratios (same {run_kind}{over})\n")
    print(f"| measure | aseqosc / {peer} | aseqosc / bare | {peer} / bare |")
    print("|---|---|---|---|")
    lone = {b: per_event(f"{b}.{direction}.lone") for b in present}
    for name, by_bridge in (("instructions per lone event (callgrind, one in flight: a keypress)", lone),
                            ("instructions per event in a burst (callgrind, 16 in flight)", ir)):
        a, p, b = by_bridge.get("aseqosc"), by_bridge.get(peer), by_bridge.get("bare")
        print(f"| {name} | {ratio_text(a / p if a and p else None)} | "
              f"{ratio_text(a / b if a and b else None)} | {ratio_text(p / b if p and b else None)} |")
    for name, mode, key in measures:
        cells = [ratio_text(same_round_ratio(x, y, direction, mode, key))
                 for x, y in (("aseqosc", peer), ("aseqosc", "bare"), (peer, "bare"))]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()
    if len(taken) > 1:
        print("Each round, aseqosc / bare:\n")
        print("| round | paced p50 | paced p99 | windowed events/s | paired p50 | paired p99 | paired windowed events/s |")
        print("|---|---|---|---|---|---|---|")
        for r in taken:
            cells = [ratio_text(round_ratio("aseqosc", "bare", direction, mode, key, r))
                     for mode, key in (("paced", "p50_us"), ("paced", "p99_us"), ("window", "eps"),
                                       ("paired", "p50_us"), ("paired", "p99_us"), ("pairwindow", "overlap_eps"))]
            print(f"| {r} | " + " | ".join(cells) + " |")
        print()
    print(f"### {title}: absolute numbers ({absolute_note}{over})\n")
    print("| bridge | instr/lone event | instr/event in a burst | CPU µs/event | RSS (VmHWM) | windowed events/s (lost) | "
          "paced p50 / p99 / max µs (lost) | paced first event µs | windowed p50 / p99 µs | "
          "paired with bare: paced p50 / p99 µs (lost) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for b in present:
        def m(mode, key, digits=0):
            return fmt(median_field(b, direction, mode, key), digits)

        def lost(mode):
            values = [field(b, direction, mode, "lost", r) for r in taken]
            values = [v for v in values if v is not None]
            return "-" if not values else f"{int(sum(values))}"

        hwm = median_field(b, direction, "window", "hwm_kb")
        print(f"| {b} | {fmt(lone[b])} | {fmt(ir[b])} | {m('window', 'cpu_us_per_event', 1)} | "
              f"{'-' if hwm is None else f'{hwm / 1024:.1f} MiB'} | {m('window', 'eps')} ({lost('window')}) | "
              f"{m('paced', 'p50_us')} / {m('paced', 'p99_us')} / {m('paced', 'max_us')} ({lost('paced')}) | "
              f"{m('paced', 'first_us')} | {m('window', 'p50_us')} / {m('window', 'p99_us')} | "
              f"{m('paired', 'p50_us')} / {m('paired', 'p99_us')} ({lost('paired')}) |")
    print()
    raw = [f"{label}: {counts[label]}" for b in present for label in (f"{b}.{direction}", f"{b}.{direction}.lone")
           if label in counts]
    if raw:
        print("callgrind totals (Ir by events sent): " + "; ".join(raw) + "\n")
