#!/usr/bin/env python3
"""Aggregates a JFR recording within a time window: CPU share per thread group (jdk.ThreadCPULoad), top self frames
of jdk.ExecutionSample and jdk.NativeMethodSample, the nearest csi4j frame, the top frame's package.
usage: scripts/jfr-aggregate.py FILE.jfr [TOP=25] [FROM=2026-11-27T08:09:28] [TO=...]   (UTC, prefix compared)
Needs the JDK's `jfr` (JAVA_HOME, else temurin 25's)."""
import json, subprocess, sys, collections, re
f = sys.argv[1]; n = int(sys.argv[2]) if len(sys.argv) > 2 else 25
T0 = sys.argv[3] if len(sys.argv) > 3 else ""; T1 = sys.argv[4] if len(sys.argv) > 4 else "9"
import os
jfr = os.path.join(os.environ.get("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64"), "bin", "jfr")
def events(name):
    out = subprocess.run([jfr, "print", "--json", "--events", name, f], capture_output=True, text=True).stdout
    return [e for e in json.loads(out)["recording"]["events"] if T0 <= e["values"]["startTime"][:23] <= T1]
def group(t):
    t = re.sub(r"[-#]?\d+$", "", t or "?")
    t = re.sub(r"\d+", "N", t)
    return t
# thread CPU: ThreadCPULoad is a rate sampled each period; weight by nothing (same period), report shares
cpu = collections.Counter()
for e in events("jdk.ThreadCPULoad"):
    v = e["values"]; th = v.get("eventThread") or {}
    cpu[group(th.get("javaName") or th.get("osName"))] += v["user"] + v["system"]
tot = sum(cpu.values()) or 1
print("== thread CPU share (jdk.ThreadCPULoad)")
for k, v in cpu.most_common(15): print(f"{100*v/tot:5.1f}%  {k}")
for ev in ("jdk.ExecutionSample", "jdk.NativeMethodSample"):
    es = events(ev)
    top = collections.Counter(); incl = collections.Counter(); pk = collections.Counter()
    for e in es:
        frames = (e["values"].get("stackTrace") or {}).get("frames") or []
        if not frames: continue
        def nm(fr): m = fr["method"]; return m["type"]["name"] + "." + m["name"]
        top[nm(frames[0])] += 1
        # first frame in our code
        ours = next((nm(fr) for fr in frames if nm(fr).startswith("io.csi4j")), "(no csi4j frame)")
        incl[ours] += 1
        pk[".".join(nm(frames[0]).split(".")[:3])] += 1
    print(f"== {ev}: {len(es)} samples; top self frames")
    for k, v in top.most_common(n): print(f"{100*v/max(len(es),1):5.1f}%  {k}")
    print(f"-- nearest csi4j frame")
    for k, v in incl.most_common(n): print(f"{100*v/max(len(es),1):5.1f}%  {k}")
    print(f"-- top frame package")
    for k, v in pk.most_common(12): print(f"{100*v/max(len(es),1):5.1f}%  {k}")
