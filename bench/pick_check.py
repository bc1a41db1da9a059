#!/usr/bin/env python3
"""Summary of scripts/device-picks: per held-out problem, the model's zero-run picks as fractions
of the problem's recorded best (the best's measured time over the pick's, timed in one run):
each setting's first pick (`measure --top 1`) and the best of its first few; then the median,
10th percentile (interpolated, as bench/model_accuracy's), geometric mean and worst over the
problems. Roles: best, pick1.. (one setting) or S.pick1.. (setting S). A pick that failed counts
0; a problem whose best failed is left out and named. With two settings, how many problems the
second picks better or worse for by more than 3%."""
import json
import math
import statistics
import sys


def times(path):
    with open(path) as f:
        m = json.load(f)
    t = {}
    for roles, r in zip(m["roles"], m["results"]):
        for role in roles.split("+"):
            t[role] = r["measured_us"] if r["status"] == "ok" else math.inf
    return m, t


def quantile(values, q):
    v = sorted(values)
    at = q * (len(v) - 1)
    below = int(at)
    if below + 1 >= len(v):
        return v[-1]
    return v[below] + (at - below) * (v[below + 1] - v[below])


def summary(name, values):
    return (f"{name:22} {len(values)} problems: median {statistics.median(values):.3f}, "
            f"p10 {quantile(values, 0.1):.3f}, geometric mean "
            f"{math.exp(statistics.fmean(math.log(max(v, 1e-9)) for v in values)):.3f}, "
            f"worst {min(values):.3f}, below 0.80: {sum(v < 0.8 for v in values)}")


def main(paths):
    rows = [times(p) for p in paths]
    settings = sorted({r.rsplit("pick", 1)[0] for _, t in rows for r in t if "pick" in r})
    first = {s: [] for s in settings}
    best_of = {s: [] for s in settings}
    heads = " ".join(f"{s + 'pick1':>8} {s + 'best':>8}" for s in settings)
    print(f"{'problem':44} {'fold':>4} {'best us':>9} {'recorded':>9} {heads}")
    for m, t in rows:
        if not math.isfinite(t.get("best", math.inf)):
            print(f"{m['problem']:44} left out: its recorded best did not run")
            continue
        cells = []
        for s in settings:
            picks = [t.get(f"{s}pick{i}", math.inf) for i in range(1, 1 + sum(
                r.startswith(s + "pick") for r in t))] or [math.inf]
            f1, fb = t["best"] / picks[0], t["best"] / min(picks)
            first[s].append(f1)
            best_of[s].append(fb)
            cells.append(f"{f1:8.3f} {fb:8.3f}")
        print(f"{m['problem']:44} {m['fold']:4d} {t['best']:9.2f}"
              f" {m['recorded_best_s'] * 1e6:9.2f} {' '.join(cells)}")
    for s in settings:
        print(summary(s + "first pick", first[s]))
        print(summary(s + "best of its picks", best_of[s]))
    if len(settings) == 2:
        a, b = first[settings[0]], first[settings[1]]
        print(f"first picks, {settings[1]} against {settings[0]}: better by > 3% on "
              f"{sum(y > x * 1.03 for x, y in zip(a, b))} problems, worse on "
              f"{sum(y < x / 1.03 for x, y in zip(a, b))}")


if __name__ == "__main__":
    main(sys.argv[1:])
