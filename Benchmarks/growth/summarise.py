#!/usr/bin/env python3
"""summarise.py OUT: the growth table (OUT/table.md) and its pictures (OUT/growth-*.png, drawn
by gnuplot) from Benchmarks/growth.sh's counts: OUT/inprocess.txt (INPROCESS lines) and, when
the VM ran, OUT/results.txt (GROWTH lines). Run by growth.sh."""

import os
import subprocess
import sys

out = sys.argv[1]


def fields(line):
    return dict(part.split("=", 1) for part in line.split()[1:])


def read_inprocess(name):
    """{dimension: {n: instructions per event}} from OUT/name, empty if it is not there."""
    result = {}
    path = os.path.join(out, name)
    for line in open(path) if os.path.exists(path) else []:
        if line.startswith("INPROCESS"):
            f = fields(line)
            result.setdefault(f["dimension"], {})[int(f["n"])] = int(f["per_event"])
    return result


inprocess = read_inprocess("inprocess.txt")
before = read_inprocess("inprocess-before.txt")
ref_path = os.path.join(out, "before-ref.txt")
ref = open(ref_path).read().strip() if before and os.path.exists(ref_path) else None

# vm[(bridge, dimension)][n] = instructions per event, whole process, (Ir(large) - Ir(small)) / (large - small)
vm = {}
runs = {}
# A run that lost a few outputs (m2o at 64 destinations, or with 512-byte SysEx 10 in each
# run) still counts the work for nearly every event; such a point is marked.
lossy = set()
path = os.path.join(out, "results.txt")
for line in open(path) if os.path.exists(path) else []:
    if line.startswith("GROWTH"):
        f = fields(line)
        events, received = int(f["events"]), int(f["received"])
        complete = f["ir"] != "failed" and received >= events * 0.98
        case = (f["bridge"], f["dimension"], int(f["n"]))
        runs.setdefault(case, {})[events] = int(f["ir"]) if complete else None
        if complete and received < events:
            lossy.add(case)
for (bridge, dimension, n), counts in runs.items():
    if len(counts) == 2 and None not in counts.values():
        (small, a), (large, b) = sorted(counts.items())
        vm.setdefault((bridge, dimension), {})[n] = (b - a) // (large - small)


def slopes(points):
    """{n: slope per unit from the previous n}."""
    ns = sorted(points)
    return {n: (points[n] - points[m]) / (n - m) for m, n in zip(ns, ns[1:])}


def number(value, digits=0):
    if value is None:
        return "-"
    if digits and abs(value) < 1:
        digits = 2
    return f"{value:,.{digits}f}"


dimensions = [
    ("destinations", "destinations (batched: a flush every 64 events)", "destination", "destinations", None),
    ("destinations_lone", "destinations, lone (a flush after every event)", "destination", None, None),
    ("routes", "routes (forwarding, a destination each)", "route", None, None),
    ("operators", "operators in one route", "operator", None, None),
    ("mappings", "mapping rules = distinct addresses (OSC -> MIDI)", "rule", None, None),
    ("mappings_template", "distinct addresses, one template rule (OSC -> MIDI)", "address", None, None),
    ("sysex", "SysEx size (bytes, to one destination)", "byte", "sysex", None),
]

before_head = f" before ({ref}) | slope |" if ref else ""
lines = [
    f"| growing | N |{before_head} aseqosc in-process | slope per unit | aseqosc in the VM (whole process) | slope | "
    "m2o in the VM | slope |",
    "|---|---:|" + ("---:|---:|" if ref else "") + "---:|---:|---:|---:|---:|---:|",
]
for key, title, unit, vm_key, _ in dimensions:
    points = inprocess.get(key, {})
    if not points:
        continue
    ours = slopes(points)
    ours_vm = vm.get(("aseqosc", vm_key), {}) if vm_key else {}
    peer = vm.get(("m2o", vm_key), {}) if vm_key else {}
    ours_vm_slopes, peer_slopes = slopes(ours_vm), slopes(peer)
    then = before.get(key, {})
    then_slopes = slopes(then)
    ns = sorted(set(points) | set(ours_vm) | set(peer))
    for i, n in enumerate(ns):
        label = f"{title}, per {unit}" if i == 0 else ""
        lines.append(
            f"| {label} | {n:,} |"
            + (f" {number(then.get(n))} | {number(then_slopes.get(n), 1)} |" if ref else "")
            + f" {number(points.get(n))} | {number(ours.get(n), 1)} | "
            f"{number(ours_vm.get(n))} | {number(ours_vm_slopes.get(n), 1)} | "
            f"{(number(peer.get(n)) + ('*' if ('m2o', vm_key, n) in lossy else '')) if vm_key else 'cannot'} | "
            f"{number(peer_slopes.get(n), 1)} |")
if lossy:
    lines.append("")
    lines.append("\\* the generator missed some outputs (at most 2 % of a run, the same number in the small and the "
                 "large run), so the difference still covers about 2,000 events.")
batched, lone = inprocess.get("destinations", {}), inprocess.get("destinations_lone", {})
if batched and lone:
    lines.append("")
    lines.append("| lone - batched, per event | " + " | ".join(f"{n} dest." for n in sorted(batched)) + " |")
    lines.append("|---|" + "---:|" * len(batched))
    lines.append("| instructions | " + " | ".join(number(lone[n] - batched[n]) for n in sorted(batched)) + " |")
open(os.path.join(out, "table.md"), "w").write("\n".join(lines) + "\n")


# Pictures: one .dat per curve, one gnuplot run per picture.
def data(name, points):
    path = os.path.join(out, f"{name}.dat")
    with open(path, "w") as f:
        for n in sorted(points):
            f.write(f"{n} {points[n]}\n")
    return path


def plot(name, title, xlabel, curves, logx=False, logy=False, ylabel="instructions per event"):
    curves = [(label, points, style) for label, points, style in curves if points]
    if not curves:
        return
    script = [
        "set terminal pngcairo size 720,440 font 'DejaVu Sans,10'",
        f"set output '{os.path.join(out, name)}.png'",
        f"set title '{title}{' (log scales)' if logx and logy else ' (log scale of N)' if logx else ''}'",
        f"set xlabel '{xlabel}'",
        f"set ylabel '{ylabel}'",
        "set key top left",
        "set grid",
        "set yrange [0:*]" if not logy else "set logscale y",
    ]
    if logx:
        script.append("set logscale x 2")
    parts = []
    for i, (label, points, style) in enumerate(curves):
        parts.append(f"'{data(f'{name}-{i}', points)}' using 1:2 with linespoints {style} title '{label}'")
    script.append("plot " + ", ".join(parts))
    subprocess.run(["gnuplot"], input="\n".join(script), text=True, check=True)


ours_style, lone_style, vm_style, peer_style = "lw 2 pt 7 lc rgb '#1f77b4'", "lw 2 pt 5 dt 2 lc rgb '#1f77b4'", \
    "lw 2 pt 9 lc rgb '#2ca02c'", "lw 2 pt 13 lc rgb '#d62728'"
plot("growth-destinations", "MIDI -> OSC: one route to N destinations", "destinations", [
    ("aseqosc in-process, batched", inprocess.get("destinations"), ours_style),
    ("aseqosc in-process, lone", inprocess.get("destinations_lone"), lone_style),
    ("aseqosc in the VM, whole process", vm.get(("aseqosc", "destinations")), vm_style),
    ("m2o in the VM, whole process", vm.get(("m2o", "destinations")), peer_style),
    (f"aseqosc {ref} in-process, batched (before)", before.get("destinations") if ref else None,
     "lw 1 pt 6 dt 3 lc rgb '#7f7f7f'"),
], logx=True, logy=True)
plot("growth-sysex", "MIDI -> OSC: SysEx messages of N bytes", "SysEx bytes", [
    ("aseqosc in-process", inprocess.get("sysex"), ours_style),
    ("aseqosc in the VM, whole process", vm.get(("aseqosc", "sysex")), vm_style),
    ("m2o -r in the VM, whole process", vm.get(("m2o", "sysex")), peer_style),
], logx=True, logy=True)
plot("growth-routes-operators", "MIDI -> OSC: routes and operators (aseqosc in-process; m2o has neither)",
     "routes, or operators in one route", [
         ("N forwarding routes, a destination each", inprocess.get("routes"), ours_style),
         ("one route of N operators", inprocess.get("operators"), vm_style),
     ])
plot("growth-mappings", "OSC -> MIDI: N rules, N addresses (aseqosc; o2m has no rules)",
     "rules, or addresses", [
         ("N literal rules, N addresses", inprocess.get("mappings"), ours_style),
         ("one template rule, N addresses", inprocess.get("mappings_template"), vm_style),
     ], logx=True)
print(open(os.path.join(out, "table.md")).read(), end="")
