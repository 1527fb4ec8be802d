#!/usr/bin/env python3
"""Report of scripts/bench-io-queue: per setting, target and job, the pair ratios (the setting's IOPS over the
default's in the same round), median, range and how many pairs were above 1; then the absolute medians and each
target's ratio to its reference per setting; then the load average per round.
Usage: bench-io-queue-report.py RESULTS.tsv LOADS.tsv"""
import statistics
import sys
from collections import defaultdict

REFERENCE = {"pool-xfs-file": "host-ext4", "ext4-volume": "host-ext4", "block-volume": "pool-xfs-file"}

values = defaultdict(dict)   # (setting, target, job) -> {round: iops}
order_s, order_t, order_j = [], [], []
for line in open(sys.argv[1]):
    rnd, setting, target, job, v = line.rstrip("\n").split("\t")
    values[(setting, target, job)][int(rnd)] = float(v)
    for seen, x in ((order_s, setting), (order_t, target), (order_j, job)):
        if x not in seen: seen.append(x)

def fmt(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:.2f}"

def summary(ratios):
    if not ratios: return "", "", ""
    m = statistics.median(ratios)
    return f"**{m:.3f}**", f"{min(ratios):.3f}-{max(ratios):.3f}", f"{sum(r > 1 for r in ratios)}/{len(ratios)}"

print("## Pair ratios: the setting's IOPS / the default's, same round (> 1 = the setting is faster)")
print()
print("The host file's row is the noise control: no loop setting touches it, so its spread is what the machine did"
      " between the two halves of a pair.")
for setting in order_s[1:] if order_s[0] == "default" else [s for s in order_s if s != "default"]:
    print()
    print(f"### `{setting}`")
    print()
    print("| target | job | median | range | pairs > 1 | per pair |")
    print("|---|---|---|---|---|---|")
    for target in order_t:
        for job in order_j:
            a, b = values[("default", target, job)], values[(setting, target, job)]
            rounds = sorted(set(a) & set(b))
            ratios = [b[r] / a[r] for r in rounds if a[r] > 0]
            med, rng, above = summary(ratios)
            print(f"| {target} | {job} | {med} | {rng} | {above} | {' '.join(f'{r:.2f}' for r in ratios)} |")

print()
print("## IOPS, median (range) over the rounds, and the median per-round ratio to the target's reference")
print()
print("| setting | target | reference | " + " | ".join(order_j) + " |")
print("|---|---|---|" + "---|" * len(order_j))
for setting in sorted(order_s, key=lambda s: s != "default"):
    for target in order_t:
        ref = REFERENCE.get(target, "")
        cells = []
        for job in order_j:
            v = values[(setting, target, job)]
            if not v:
                cells.append(""); continue
            xs = list(v.values())
            cell = f"{fmt(statistics.median(xs))} ({fmt(min(xs))}-{fmt(max(xs))})"
            if ref:
                rv = values[(setting, ref, job)]
                rs = [v[r] / rv[r] for r in v if r in rv and rv[r] > 0]
                if rs: cell += f"; {statistics.median(rs):.2f}x"
            cells.append(cell)
        print(f"| {setting} | {target} | {ref or '(the limit)'} | " + " | ".join(cells) + " |")

print()
print("## Load average (1, 5, 15 min) at the start of each round")
print()
print("| round | load |")
print("|---|---|")
for line in open(sys.argv[2]):
    rnd, load = line.rstrip("\n").split("\t")
    print(f"| {rnd} | {load} |")
