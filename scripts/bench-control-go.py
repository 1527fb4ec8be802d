#!/usr/bin/env python3
"""Summary of scripts/bench-control-go: bench-control-go.py OUT_DIR ROUNDS SERVER... (markdown on stdout).

Per server, each figure's median [min-max] over the rounds; with two or more servers, per round the ratio of each
server's figure to the first server's (the rounds alternate their order), as median [min-max]."""
import json
import re
import statistics
import sys
from pathlib import Path

out, rounds, servers = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
SERVER = re.compile(r"server: (\d+) voluntary context switches, (\d+) ms CPU; load after ([\d.]+)")
LOAD = re.compile(r"; load ([\d.]+)")


def figures(server, r):
    """The figures of one round of one server, or {} when a run is missing or failed."""
    f = {}
    for kind in ("cd", "probe"):
        stem = out / f"{server}-{r}-{kind}"
        try:
            data = json.loads(Path(f"{stem}.json").read_text())[0]
        except (OSError, ValueError, IndexError):
            continue
        text = Path(f"{stem}.txt").read_text()
        m, l = SERVER.search(text), LOAD.search(text)
        n = data["iterations"]
        if kind == "cd":
            f["create+delete iterations/s"] = data["per_second"]
            for method in ("CreateVolume", "DeleteVolume"):
                f[f"{method} p50 ms"] = data["p50_ms"][method]
                f[f"{method} p99 ms"] = data["p99_ms"][method]
            if m:
                f["server CPU ms per iteration"] = int(m[2]) / n
                f["server voluntary context switches per iteration"] = int(m[1]) / n
            f["client CPU ms per iteration"] = data["client_cpu_ms"] / n
            if l and m:
                f["load average (before, after)"] = (float(l[1]), float(m[3]))
        else:
            f["Probe calls/s"] = data["per_second"]
            f["Probe p50 ms"] = data["p50_ms"]["Probe"]
            if m:
                f["server CPU ms per Probe"] = int(m[2]) / n
                f["server voluntary context switches per Probe"] = int(m[1]) / n
    return f


def fmt(x):
    return f"{x:,.1f}" if abs(x) >= 100 else f"{x:.3f}" if abs(x) < 10 else f"{x:.2f}"


def spread(values):
    return f"{fmt(statistics.median(values))} [{fmt(min(values))}–{fmt(max(values))}]" if values else "—"


data = {s: [figures(s, r) for r in range(1, rounds + 1)] for s in servers}
keys = [k for k in figures(servers[0], 1) or next((d for s in servers for d in data[s] if d), {})]
print(f"# Control path, Go client: {rounds} rounds, servers {', '.join(servers)}\n")
print((out / "run.txt").read_text().strip().replace("\n", "  \n") + "\n")
print("| figure | " + " | ".join(servers) + " |")
print("|---|" + "---:|" * len(servers))
for k in keys:
    if k.startswith("load"):
        loads = {s: [x for d in data[s] if k in d for x in d[k]] for s in servers}
        print(f"| {k} | " + " | ".join(f"{min(v):.1f}–{max(v):.1f}" if v else "—" for v in loads.values()) + " |")
        continue
    print(f"| {k} | " + " | ".join(spread([d[k] for d in data[s] if k in d]) for s in servers) + " |")
if len(servers) > 1:
    base = servers[0]
    print(f"\nRatios to {base}, per round (the same round's runs), median [min–max]:\n")
    print("| figure | " + " | ".join(f"{s}/{base}" for s in servers[1:]) + " |")
    print("|---|" + "---:|" * (len(servers) - 1))
    for k in keys:
        if k.startswith("load"):
            continue
        cells = []
        for s in servers[1:]:
            ratios = [a[k] / b[k] for a, b in zip(data[s], data[base]) if k in a and k in b and b[k]]
            cells.append(spread(ratios))
        print(f"| {k} | " + " | ".join(cells) + " |")
