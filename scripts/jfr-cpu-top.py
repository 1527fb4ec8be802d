#!/usr/bin/env python3
"""CPU-time samples (jdk.CPUTimeSample) of a JFR recording: share per thread group, top self frames, and the inclusive
share of the frames that name the control path's parts (catalog, loop-device look, gRPC event loop, ...).
usage: scripts/jfr-cpu-top.py FILE.jfr [TOP=25]   (needs the JDK's `jfr`: JAVA_HOME, else temurin 25's)"""
import collections
import json
import os
import re
import subprocess
import sys

f = sys.argv[1]
top_n = int(sys.argv[2]) if len(sys.argv) > 2 else 25
jfr = os.path.join(os.environ.get("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64"), "bin", "jfr")
out = subprocess.run([jfr, "print", "--json", "--stack-depth", "96", "--events", "jdk.CPUTimeSample", f],
                     capture_output=True, text=True, check=True).stdout
events = json.loads(out)["recording"]["events"]
n = len(events) or 1
threads, self_frames, inclusive = collections.Counter(), collections.Counter(), collections.Counter()
PARTS = {
    "gRPC event loop thread": lambda fr: any(x.endswith("SingleThreadIoEventLoop.run") for x in fr),
    "ControllerService.createVolume": lambda fr: any(x.endswith("ControllerService.createVolume") for x in fr),
    "ControllerService.deleteVolume": lambda fr: any(x.endswith("ControllerService.deleteVolume") for x in fr),
    "catalog transactions (Catalog.inTransaction)": lambda fr: any(x.endswith("Catalog.inTransaction") for x in fr),
    "  of which the WAL sync (GroupCommit.sync)": lambda fr: any(x.endswith("GroupCommit.sync") for x in fr),
    "SQLite step (NativeDB.step)": lambda fr: any(x.endswith("NativeDB.step") for x in fr),
    "loop-device looks (LoopDevice.bound)": lambda fr: any(x.endswith("LoopDevice.bound") for x in fr),
    "request/response validation (SpecValidator)": lambda fr: any("SpecValidator" in x for x in fr),
    "sidecar write (PoolLayout.writeSidecarUnsynced)": lambda fr: any(x.endswith("writeSidecarUnsynced") for x in fr),
    "exceptions (Throwable.fillInStackTrace)": lambda fr: any(x.endswith("fillInStackTrace") for x in fr),
}
parts = collections.Counter()
for e in events:
    v = e["values"]
    t = v.get("eventThread") or v.get("sampledThread") or {}
    threads[re.sub(r"[-#]?\d+$", "", t.get("javaName") or t.get("osName") or "?")] += 1
    frames = [x["method"]["type"]["name"].replace("/", ".") + "." + x["method"]["name"]
              for x in ((v.get("stackTrace") or {}).get("frames") or [])]
    if frames:
        self_frames[frames[0]] += 1
    for name, match in PARTS.items():
        if match(frames):
            parts[name] += 1
print(f"{len(events)} CPU-time samples (jdk.CPUTimeSample)\n\n== threads")
for k, c in threads.most_common(8):
    print(f"{100 * c / n:5.1f}%  {k}")
print("\n== parts (inclusive)")
for name in PARTS:
    print(f"{100 * parts[name] / n:5.1f}%  {name}")
def count(name):
    out = subprocess.run([jfr, "print", "--json", "--stack-depth", "1", "--events", name, f], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)["recording"]["events"]
alloc = sum(e["values"]["weight"] for e in count("jdk.ObjectAllocationSample"))
print(f"\n== memory: {len(count('jdk.YoungGarbageCollection'))} young collections, {alloc / 1e6:.0f} MB allocated "
      f"(jdk.ObjectAllocationSample weights), {len(count('jdk.JavaExceptionThrow'))} exceptions thrown")
print("\n== self")
for k, c in self_frames.most_common(top_n):
    print(f"{100 * c / n:5.1f}%  {k}")
