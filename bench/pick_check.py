#!/usr/bin/env python3
"""Summary of scripts/device-picks: per held-out problem, the model's zero-run picks as fractions
of the problem's recorded best (the best's measured time over the pick's, timed in one run):
each setting's first pick (`measure --top 1`) and the best of its first few; then the median,
10th percentile and worst over the problems. Roles: best, pick1.. (one setting) or S.pick1..
(setting S)."""
import json
import statistics
import sys


def times(path):
    m = json.load(open(path))
    t = {}
    for roles, r in zip(m["roles"], m["results"]):
        for role in roles.split("+"):
            t[role] = r["measured_us"] if r["status"] == "ok" else float("inf")
    return m, t


def p10(values):
    return sorted(values)[max(0, int(0.1 * len(values) + 0.5) - 1)]


def summary(name, values):
    return (f"{name:22} {len(values)} problems: median {statistics.median(values):.3f}, "
            f"p10 {p10(values):.3f}, worst {min(values):.3f}, below 0.80: "
            f"{sum(v < 0.8 for v in values)}")


def main(paths):
    rows = [times(p) for p in paths]
    settings = sorted({r.rsplit("pick", 1)[0] for _, t in rows for r in t if "pick" in r})
    first = {s: [] for s in settings}
    best_of = {s: [] for s in settings}
    heads = " ".join(f"{s + 'pick1':>8} {s + 'best':>8}" for s in settings)
    print(f"{'problem':44} {'fold':>4} {'best us':>9} {'recorded':>9} {heads}")
    for m, t in rows:
        cells = []
        for s in settings:
            picks = [r for r in t if r.startswith(s + "pick")]
            f1, fb = t["best"] / t[s + "pick1"], t["best"] / min(t[r] for r in picks)
            first[s].append(f1)
            best_of[s].append(fb)
            cells.append(f"{f1:8.3f} {fb:8.3f}")
        print(f"{m['problem']:44} {m['fold']:4d} {t['best']:9.2f}"
              f" {m['recorded_best_s'] * 1e6:9.2f} {' '.join(cells)}")
    for s in settings:
        print(summary(s + "first pick", first[s]))
        print(summary(s + "best of its picks", best_of[s]))


if __name__ == "__main__":
    main(sys.argv[1:])
