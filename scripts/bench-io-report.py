#!/usr/bin/env python3
"""Markdown tables for scripts/bench-io: medians, ranges, and per-round ratios to each target's reference.

Usage: bench-io-report.py RESULTS.tsv TARGET... where RESULTS.tsv holds "phase round target metric value" lines
and each TARGET is "name|kind|path|reference" (an empty reference: the target is a reference itself).
A ratio is taken per round (target / its reference in the same round, minutes apart) and then summarised, so
that a slow moment of the shared machine shifts both sides of it.
"""
import statistics
import sys
from collections import defaultdict

# (metric, title, higher is better, show ratio)
METRICS = [
    ("fsync-qd1.write_iops", "4k write+fsync QD1, IOPS", True, True),
    ("fsync-qd1.fsync_p99_us", "4k write+fsync QD1, fsync p99 (us)", False, True),
    ("fresh-fsync-qd1.write_iops", "first write into fresh space: 4k write+fsync QD1, IOPS", True, True),
    ("fresh-fsync-qd1.fsync_p99_us", "first write into fresh space: fsync p99 (us)", False, True),
    ("randread-qd1.read_iops", "4k randread QD1, IOPS", True, True),
    ("randread-qd32.read_iops", "4k randread QD32, IOPS", True, True),
    ("randwrite-qd1.write_iops", "4k randwrite QD1, IOPS", True, True),
    ("randwrite-qd32.write_iops", "4k randwrite QD32, IOPS", True, True),
    ("seqread-1m.read_mbps", "1 MiB sequential read QD8, MB/s", True, True),
    ("seqwrite-1m.write_mbps", "1 MiB sequential write QD8, MB/s", True, True),
    ("pagecache-after-1g-odirect-read.mib", "page cache left by an O_DIRECT read of 1 GiB (MiB, target < 128)", False, False),
]
SUMMARY = [
    ("fsync-qd1.write_iops", "fsync QD1"),
    ("fresh-fsync-qd1.write_iops", "fsync fresh"),
    ("randread-qd1.read_iops", "rr QD1"),
    ("randread-qd32.read_iops", "rr QD32"),
    ("randwrite-qd1.write_iops", "rw QD1"),
    ("randwrite-qd32.write_iops", "rw QD32"),
    ("seqread-1m.read_mbps", "seq read"),
    ("seqwrite-1m.write_mbps", "seq write"),
]


def fmt(v):
    if v >= 10000:
        return f"{v:,.0f}"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def spread(values):
    return f"{fmt(min(values))}–{fmt(max(values))}"


def main():
    results = defaultdict(dict)  # (phase, metric, target) -> {round: value}
    phases = []
    with open(sys.argv[1]) as f:
        for line in f:
            phase, rnd, target, metric, value = line.rstrip("\n").split("\t")
            if phase not in phases:
                phases.append(phase)
            results[(phase, metric, target)][rnd] = float(value)
    targets = [t.split("|") for t in sys.argv[2:]]
    ref_of = {t[0]: t[3] for t in targets}
    names = [t[0] for t in targets]

    def ratios(phase, metric, name, higher):
        ref = ref_of[name]
        mine, theirs = results.get((phase, metric, name), {}), results.get((phase, metric, ref), {})
        out = []
        for rnd, v in mine.items():
            r = theirs.get(rnd)
            if r and v:
                out.append(v / r if higher else r / v)  # > 1 is better than the reference either way
        return out

    for phase in phases:
        title = "" if phase == "main" else f" ({phase})"
        print(f"## Summary{title}: median ratio to the reference (per-round ratios; 1.00 = as fast as the limit)")
        print()
        print("| target | reference | " + " | ".join(s[1] for s in SUMMARY) + " | page cache MiB |")
        print("|---|---|" + "---|" * (len(SUMMARY) + 1))
        for name in names:
            cells = []
            for metric, _ in SUMMARY:
                rs = ratios(phase, metric, name, True)
                cells.append(f"{statistics.median(rs):.2f}" if rs else "")
            pc = list(results.get((phase, "pagecache-after-1g-odirect-read.mib", name), {}).values())
            print(f"| {name} | {ref_of[name] or '(reference)'} | " + " | ".join(cells)
                  + f" | {fmt(statistics.median(pc)) if pc else ''} |")
        print()
        for metric, heading, higher, show_ratio in METRICS:
            if not any((phase, metric, n) in results for n in names):
                continue
            print(f"### {heading}{title}")
            print()
            print("| target | median | range | ratio to reference (median, range) | reference |")
            print("|---|---|---|---|---|")
            for name in names:
                vals = list(results.get((phase, metric, name), {}).values())
                if not vals:
                    continue
                rs = ratios(phase, metric, name, higher) if show_ratio else []
                ratio = f"{statistics.median(rs):.2f} ({min(rs):.2f}–{max(rs):.2f})" if rs else ""
                print(f"| {name} | {fmt(statistics.median(vals))} | {spread(vals)} | {ratio} | {ref_of[name]} |")
            print()
    print("Ratios are oriented so that > 1 is better than the reference (for latencies: reference p99 / target p99).")


if __name__ == "__main__":
    main()
