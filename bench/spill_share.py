#!/usr/bin/env python3
"""What a ranking loses by putting kernels that spill behind those that do not.

Reads recordings (CSV, gzip or not, as `gemmtune export` writes them) and, per problem (device and
shape), compares the fastest configuration measured with the fastest among those spilling at most
a given number of bytes per thread. Reports, per limit, the median and the worst of that fraction
over the problems and how many problems lose more than 1%; then the share of spilled kernels among
all measured configurations and among those within 3% of their problem's best.

    python3 bench/spill_share.py RECORDING.csv[.gz] ... [--limits 0 32 128]
"""
import argparse
import statistics
from collections import defaultdict

from recordings import ok_rows, problem_of


def read(paths):
    """problem -> [(time_s, spill_bytes)] over the rows that measured correctly."""
    rows = defaultdict(list)
    for _, r in ok_rows(paths, ("status", "time_s", "spill_bytes")):
        if float(r["time_s"]) > 0:
            rows[problem_of(r)].append((float(r["time_s"]), int(float(r["spill_bytes"] or 0))))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recordings", nargs="+")
    parser.add_argument("--limits", type=int, nargs="+", default=[0, 32, 128],
                        help="spill bytes per thread a kernel may have and stay in")
    args = parser.parse_args()
    rows = read(args.recordings)
    print(f"{len(rows)} problems, {sum(len(v) for v in rows.values())} configurations")
    for limit in args.limits:
        fractions = []
        for problem, measured in rows.items():
            best = min(t for t, _ in measured)
            kept = [t for t, s in measured if s <= limit]
            fractions.append((best / min(kept) if kept else 0.0, problem))
        worst = min(fractions)
        print(f"spill <= {limit:4d} bytes: best kept / best, median {statistics.median(f for f, _ in fractions):.4f}, "
              f"worst {worst[0]:.3f} ({' '.join(worst[1][1:7])}), "
              f"{sum(f < 0.99 for f, _ in fractions)} problems below 0.99")
    near = total = near_spilled = total_spilled = 0
    for measured in rows.values():
        best = min(t for t, _ in measured)
        for t, s in measured:
            total += 1
            total_spilled += s > 0
            if t <= 1.03 * best:
                near += 1
                near_spilled += s > 0
    print(f"spilled: {total_spilled} of {total} configurations ({100 * total_spilled / total:.1f}%), "
          f"{near_spilled} of {near} within 3% of their problem's best ({100 * near_spilled / near:.1f}%)")


if __name__ == "__main__":
    main()
