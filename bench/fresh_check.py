#!/usr/bin/env python3
"""Summary of scripts/device-fresh-check: per problem, the model's zero-run pick, the best of a
tune of a few evaluations and the best of a timed tune, each measured in one run beside cuBLAS;
then the medians and the worst of the pick's and the short tune's fraction of the timed tune's
best (measured time of the timed tune's best / measured time of the other)."""
import json
import statistics
import sys


def row(path):
    m = json.load(open(path))
    by_role = {}
    for role, r in zip(m["roles"], m["results"]):
        by_role[role] = r["measured_us"] if r["status"] == "ok" else float("inf")
    return m, by_role


def main(paths):
    picks, shorts = [], []
    others = {}  # FRESH_EXTRA's roles: each configuration's fraction of the timed tune's best
    print(f"{'problem':40} {'cuBLAS us':>10} {'pick x':>7} {'evals x':>7} {'tune x':>7}"
          f" {'pick/tune':>9} {'evals/tune':>10} {'tuned':>6}")
    for path in paths:
        m, t = row(path)
        cublas = m["cublas_us"]
        tuned = t.get("tune_seconds", float("inf"))
        ratio = {k: (cublas / v if v > 0 else 0.0) for k, v in t.items()}
        # A check without a timed tune's best (a re-pick of a problem whose JSON was lost) gives
        # the pick against cuBLAS only.
        pick = tuned / t["pick"] if "pick" in t and "tune_seconds" in t else 0.0
        short = tuned / t["tune_evaluations"] if "tune_evaluations" in t else 0.0
        for role, v in t.items():
            if role not in ("pick", "tune_seconds", "tune_evaluations") and "tune_seconds" in t:
                others.setdefault(role, []).append((m["problem"], tuned / v if v > 0 else 0.0))
        if pick:
            picks.append(pick)
        if short:
            shorts.append(short)
        print(f"{m['problem']:40} {cublas:10.2f} {ratio.get('pick', 0):7.3f}"
              f" {ratio.get('tune_evaluations', 0):7.3f} {ratio.get('tune_seconds', 0):7.3f}"
              f" {pick:9.3f} {short:10.3f} {m['tune_attempts']:6d}")
    if picks:
        print(f"{len(picks)} problems: zero-run pick / timed tune's best median "
              f"{statistics.median(picks):.3f}, worst {min(picks):.3f}")
    if shorts:
        print(f"{len(shorts)} problems: best of the short tune / timed tune's best median "
              f"{statistics.median(shorts):.3f}, worst {min(shorts):.3f}")
    for role, rows in others.items():
        for problem, fraction in rows:
            print(f"{role}: {problem:40} {fraction:.3f} of the timed tune's best")
        fractions = [f for _, f in rows]
        print(f"{len(rows)} problems: {role} / timed tune's best median "
              f"{statistics.median(fractions):.3f}, worst {min(fractions):.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
