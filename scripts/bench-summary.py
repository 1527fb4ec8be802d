#!/usr/bin/env python3
"""The table of bench/README.md from what scripts/bench-all wrote into a results directory:
each target of issue 9, the Go hostpath reference the issue quotes, and what csi4j measured."""
import csv
import json
import os
import re
import sys

out = sys.argv[1]


def report(name):
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def call(r, rpc, key="p50_ms"):
    return r["calls"][rpc][key] if r and rpc in r["calls"] else None


def ms(v):
    return "-" if v is None else ("%.2f ms" % v if v < 10 else "%.0f ms" % v)


def verdict(ok):
    return "met" if ok else "**missed**"


scale = []
scale_path = os.path.join(out, "scale.csv")
if os.path.exists(scale_path):
    with open(scale_path) as f:
        scale = [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]


def at(volumes):
    return next((s for s in scale if s["volumes"] == volumes), None)


rows = []
cd1, cd16 = report("create-delete-1"), report("create-delete-16")
if cd1:
    v = cd1["iterations_per_second"]
    rows.append(("CreateVolume+DeleteVolume, 1 MiB mount volumes, 1 client", "~650/s (empty driver)", ">= 2,000/s",
                 "%.0f/s (create p50 %s, delete p50 %s)" % (v, ms(call(cd1, "CreateVolume")), ms(call(cd1, "DeleteVolume"))),
                 verdict(v >= 2000)))
big = scale[-1] if scale else None
small = at(0)
if big and small and big["volumes"] > 0:
    ratio = big["create_delete_per_s_1"] / small["create_delete_per_s_1"]
    rows.append(("... after %d volumes exist (1 client)" % big["volumes"], "~66/s at 10,000", "within 20% of empty",
                 "%.0f/s vs %.0f/s empty (%.0f%%)" % (big["create_delete_per_s_1"], small["create_delete_per_s_1"], 100 * ratio),
                 verdict(ratio >= 0.8)))
if cd16 and cd1:
    v16 = cd16["iterations_per_second"]
    rows.append(("... 16 clients", "~1,000/s", "more than 1 client", "%.0f/s (%.1fx one client)" % (v16, v16 / cd1["iterations_per_second"]),
                 verdict(v16 > cd1["iterations_per_second"])))
s10k = at(10000)
if s10k:
    rows.append(("ListVolumes, 10,000 volumes in one page", "~0.53 s", "< 100 ms", ms(s10k["one_page_ms"]),
                 verdict(s10k["one_page_ms"] < 100)))
    rows.append(("ListVolumes, 10,000 volumes in pages of 500", "-", "< 150 ms in total", ms(s10k["paged_500_total_ms"]),
                 verdict(s10k["paged_500_total_ms"] < 150)))
if scale:
    pages = [(s["volumes"], s["page_of_500_ms"]) for s in scale if s["volumes"] >= 1000]
    if pages:
        rows.append(("ListVolumes, one page of 500 as the total grows", "-", "independent of the total",
                     ", ".join("%s at %d" % (ms(p), v) for v, p in pages), verdict(max(p for _, p in pages) < 2 * min(p for _, p in pages))))
for name, rpc, label in [("snapshot", "CreateSnapshot", "CreateSnapshot"), ("clone", "CreateVolume", "clone (CreateVolume from a volume)"),
                         ("restore", "CreateVolume", "restore (CreateVolume from a snapshot)")]:
    r = report(name)
    if r:
        v = call(r, rpc)
        rows.append(("%s of a volume with data written (published, frozen around the cut)" % label, "`tar czf`: seconds per GiB",
                     "< 50 ms, independent of data size", "p50 %s, p99 %s" % (ms(v), ms(call(r, rpc, "p99_ms"))), verdict(v < 50)))
r1 = report("snapshot-1g")
if r1:
    rows.append(("... CreateSnapshot with 1 GiB written, for comparison", "-", "-", "p50 %s" % ms(call(r1, "CreateSnapshot")), ""))
g = report("group-snapshot")
if g:
    v = call(g, "CreateVolumeGroupSnapshot")
    rows.append(("Group snapshot of 8 volumes (1 GiB written each, all published), incl. freeze/thaw", "-", "< 200 ms",
                 "p50 %s, p99 %s" % (ms(v), ms(call(g, "CreateVolumeGroupSnapshot", "p99_ms"))), verdict(v < 200)))
sp = report("stage-publish")
if sp:
    v = call(sp, "NodeStageVolume") + call(sp, "NodePublishVolume")
    rows.append(("NodeStageVolume (formatted already) + NodePublishVolume", "-", "< 50 ms p50",
                 "%s (stage %s + publish %s)" % (ms(v), ms(call(sp, "NodeStageVolume")), ms(call(sp, "NodePublishVolume"))), verdict(v < 50)))
p = report("probe-1000")
if p:
    v = call(p, "Probe", "p99_ms")
    rows.append(("Probe at 1,000 calls/s", "-", "p99 < 2 ms", "p99 %s (p50 %s, %.0f calls/s)" % (ms(v), ms(call(p, "Probe")), p["calls_per_second"]),
                 verdict(v < 2)))
startup_path = os.path.join(out, "startup.txt")
if os.path.exists(startup_path):
    with open(startup_path) as f:
        first = next((l for l in f if l.startswith("launcher (")), None)
    if first:
        nums = re.findall(r"([\d.]+) (ms|MiB)", first)
        probe, rss = float(nums[0][0]), float(nums[2][0])
        rows.append(("Start to first served Probe (default launcher)", "~0.05 s", "< 400 ms", "%.0f ms" % probe, verdict(probe < 400)))
        rows.append(("Idle RSS (default launcher)", "~16 MiB", "< 80 MiB", "%.1f MiB" % rss, verdict(rss < 80)))

print("| scenario | Go hostpath (issue 9) | target | csi4j | |")
print("|---|---|---|---|---|")
for row in rows:
    print("| " + " | ".join(row) + " |")
