#!/usr/bin/env python3
"""Summary of scripts/bench-old-vs-new: per scenario, per pair, throughput and the first call's p50/p99 of old and
new, the ratios new/old, and the median ratio with its min-max range; then the median ratios of every other call.
Throughput ratio < 1 or latency ratio > 1 means new is slower.
  bench-old-vs-new.py OUT_DIR PAIRS"""
import json, os, re, statistics, sys

out, pairs = sys.argv[1], int(sys.argv[2])
scenarios = []
for f in sorted(os.listdir(out)):
    if f.endswith('-1-old.json'):
        scenarios.append(f[:-len('-1-old.json')])

def load(name, p, b):
    path = os.path.join(out, f'{name}-{p}-{b}.json')
    if not os.path.exists(path):
        return None
    with open(path) as fh:
        return json.load(fh)

def med(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return 'n/a'
    return f'{statistics.median(xs):.3f} [{min(xs):.3f}-{max(xs):.3f}]'

def server(name, p, b, iterations):
    """The server's voluntary context switches and CPU ms per iteration, from the run's .txt (None if absent)."""
    path = os.path.join(out, f'{name}-{p}-{b}.txt')
    if not os.path.exists(path) or not iterations:
        return None
    with open(path) as fh:
        m = re.search(r'server: (\d+) voluntary context switches, (\d+) ms CPU', fh.read())
    return (int(m.group(1)) / iterations, int(m.group(2)) / iterations) if m else None

def ratio(a, b):
    return None if a is None or b is None or a == 0 else b / a

print('# per-pair figures (old, new, ratio new/old)\n')
verdict = []
for name in scenarios:
    runs = [(load(name, p, 'old'), load(name, p, 'new')) for p in range(1, pairs + 1)]
    first = next(r for pair in runs for r in pair if r)
    calls = list(first['calls'].keys())
    main = calls[0]
    print(f'## {name} (iterations: {first["requests"]}, concurrency {first["concurrency"]}; latency of {main})\n')
    print('| pair | order | it/s old | it/s new | ratio | p50 ms old | p50 ms new | ratio | p99 ms old | p99 ms new | ratio | failed old/new |')
    print('|---|---|---|---|---|---|---|---|---|---|---|---|')
    rt, r50, r99 = [], [], []
    others = {c: ([], []) for c in calls[1:]}
    for p, (o, n) in enumerate(runs, 1):
        order = 'old,new' if p % 2 else 'new,old'
        if not o or not n:
            print(f'| {p} | {order} | missing run | | | | | | | | | |')
            continue
        t = ratio(o['iterations_per_second'], n['iterations_per_second'])
        a = ratio(o['calls'][main]['p50_ms'], n['calls'][main]['p50_ms'])
        z = ratio(o['calls'][main]['p99_ms'], n['calls'][main]['p99_ms'])
        rt.append(t); r50.append(a); r99.append(z)
        for c in calls[1:]:
            others[c][0].append(ratio(o['calls'][c]['p50_ms'], n['calls'][c]['p50_ms']))
            others[c][1].append(ratio(o['calls'][c]['p99_ms'], n['calls'][c]['p99_ms']))
        print(f'| {p} | {order} | {o["iterations_per_second"]:.1f} | {n["iterations_per_second"]:.1f} | {t:.3f} '
              f'| {o["calls"][main]["p50_ms"]:.3f} | {n["calls"][main]["p50_ms"]:.3f} | {a:.3f} '
              f'| {o["calls"][main]["p99_ms"]:.3f} | {n["calls"][main]["p99_ms"]:.3f} | {z:.3f} '
              f'| {o["failed_iterations"]}/{n["failed_iterations"]} |')
    waits = [(server(name, p, 'old', o and o['iterations']), server(name, p, 'new', n and n['iterations']))
             for p, (o, n) in enumerate(runs, 1)]
    if any(w for pair in waits for w in pair):
        print('\nserver per iteration (voluntary context switches, CPU ms), old -> new: '
              + '; '.join(f'pair {p}: {o[0]:.1f}/{o[1]:.2f} -> {n[0]:.1f}/{n[1]:.2f}'
                          for p, (o, n) in enumerate(waits, 1) if o and n))
    line = f'throughput {med(rt)}; {main} p50 {med(r50)}, p99 {med(r99)}'
    for c, (x50, x99) in others.items():
        line += f'; {c} p50 {med(x50)}, p99 {med(x99)}'
    print(f'\nmedian ratio new/old [min-max]: {line}\n')
    verdict.append((name, rt, r50, r99))

print('# medians of the ratios new/old [min-max]\n')
print('| scenario | throughput | p50 | p99 |')
print('|---|---|---|---|')
for name, rt, r50, r99 in verdict:
    print(f'| {name} | {med(rt)} | {med(r50)} | {med(r99)} |')
