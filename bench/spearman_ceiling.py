#!/usr/bin/env python3
"""How far measurement noise alone caps a ranking of the recordings.

Reads recordings (CSV, gzip or not, as `gemmtune export` writes them), finds the configurations
of a problem measured in two runs (a file without a `run` column counts as one run), and reports
how much two runs differ. Then, per problem, it ranks two copies of the recording each perturbed
by log-normal noise of a given spread and gives the median Spearman between them over the
problems. A perfect model ranked against measurements that noisy would reach at least that (it
meets the noise of one measurement, not two): if the figure is high, noise does not cap a model's
Spearman near it.

    python3 bench/spearman_ceiling.py RECORDING.csv[.gz] ... [--sd 0.01 0.02 0.03] [--seed 1]
"""
import argparse
import math
import random
import statistics
from collections import defaultdict

from recordings import PROBLEM, ok_rows, problem_of

NOT_CONFIG = set(PROBLEM) | {"alpha", "status", "error", "time_s", "gflops", "min_s", "max_s",
                              "repetitions", "rel_error", "registers", "spill_bytes", "smem_bytes",
                              "energy_j", "predicted_s", "strategy", "run", "elapsed_s"}


def read(paths):
    """(problem, config) -> {run: time_s} over the rows that measured correctly."""
    times = defaultdict(dict)
    for path, row in ok_rows(paths):
        config = tuple((c, row[c] or "0") for c in row if c not in NOT_CONFIG and row[c] not in ("", "0"))
        times[(problem_of(row), config)].setdefault(row.get("run") or path, float(row["time_s"]))
    return times


def ranks(values):
    order = sorted(range(len(values)), key=values.__getitem__)
    out = [0] * len(values)
    for rank, i in enumerate(order):
        out[i] = rank
    return out


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    mean = (len(a) - 1) / 2
    return sum((x - mean) * (y - mean) for x, y in zip(ra, rb)) / sum((x - mean) ** 2 for x in ra)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("recordings", nargs="+")
    parser.add_argument("--sd", type=float, nargs="+", default=[0.01, 0.02, 0.03],
                        help="spreads of log time to try")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    times = read(args.recordings)
    repeats = [math.log(t[1] / t[0]) for t in
               (list(runs.values()) for runs in times.values()) if len(t) >= 2]
    if repeats:
        print(f"{len(repeats)} configurations measured in two runs or more: the two differ by a "
              f"median {100 * statistics.median(abs(r) for r in repeats):.1f}%")
    by_problem = defaultdict(list)
    for (problem, _), runs in times.items():
        by_problem[problem].append(statistics.median(runs.values()))
    rng = random.Random(args.seed)
    for sd in args.sd:
        values = []
        for recording in by_problem.values():
            # Too few configurations to rank, as model_accuracy leaves them out.
            if len(recording) < 3:
                continue
            a = [t * math.exp(rng.gauss(0, sd)) for t in recording]
            b = [t * math.exp(rng.gauss(0, sd)) for t in recording]
            values.append(spearman(a, b))
        if not values:
            raise SystemExit("no problem holds 3 configurations or more")
        print(f"noise of {100 * sd:.0f}% a measurement: median Spearman {statistics.median(values):.3f} "
              f"over {len(values)} problems")


if __name__ == "__main__":
    main()
