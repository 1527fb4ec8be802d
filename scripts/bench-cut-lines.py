#!/usr/bin/env python3
"""Incremental cuts in scripts/bench-replication result files: writes held and the walk of the image inside the freeze
(the first "extents compared in" of a cut's line), n / median / p90 / max per file.
Usage: scripts/bench-cut-lines.py RESULT.md..."""
import re
import statistics
import sys

LINE = re.compile(r'^([0-9.]+) ([0-9.]+) incremental since \S+: \d+ ranges, \d+ bytes changed, \d+ FICLONERANGE calls '
                  r'\(extents compared in ([0-9.]+) ms')


def quantiles(values):
    v = sorted(values)
    if not v:
        return "no cuts"
    p90 = v[min(len(v) - 1, int(0.9 * len(v) + 0.999) - 1)]
    return "n=%d median %.0f p90 %.0f max %.0f" % (len(v), statistics.median(v), p90, v[-1])


for path in sys.argv[1:]:
    held, walk = [], []
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if m:
                held.append(float(m.group(1)))
                walk.append(float(m.group(3)))
    print("%s: writes held %s; the walk inside %s" % (path.split('/')[-1], quantiles(held), quantiles(walk)))
