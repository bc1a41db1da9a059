#!/usr/bin/env python3
"""The ceiling the zero-run space puts on the model's pick: for each recorded problem (S, D, C
and Z rows of `gemmtune export` CSVs, compressed or not), the fastest recorded configuration that
`gemmtune space` keeps, as a fraction of the fastest recorded at all (the tune's best: refinement
reaches values the space does not enumerate, and configurations the soft stages prune). Also
where each problem's best and each configuration within 3% of it leave the space (`space --why`).
  bench/domain_cap.py [--gemmtune build/gemmtune] [--domain full] FILE...
"""
import argparse
import collections
import csv
import gzip
import io
import json
import re
import statistics
import subprocess
import sys

# The id's tokens in order; the optional ones are printed only when not 0.
TOKENS = "BM BN BK DX DY DXA DYA DXB DYB VA VB LA LB PD PF ST UR RS VS ED MM AC SK VC SL".split()
OPTIONAL = {"MM", "AC", "SK", "VC", "SL"}
SPEC_OF_DEVICE = {"NVIDIA H100 80GB HBM3": "H100-SXM", "NVIDIA H200": "H200"}
PROBLEM_COLUMNS = "precision op_a op_b m n k lda ldb ldc batch beta".split()


def config_id(row):
    parts = []
    for token in TOKENS:
        value = row.get(token) or "0"
        if token in OPTIONAL and value == "0":
            continue
        parts.append(token + value)
    return "_".join(parts)


def read_rows(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        yield from csv.DictReader(io.TextIOWrapper(f))


def recorded_times(paths):
    """{(spec, problem columns...): {config id: median time}} of the ok S, D, C and Z rows."""
    times = collections.defaultdict(lambda: collections.defaultdict(list))
    for path in paths:
        for row in read_rows(path):
            if row["status"] != "ok" or row["precision"] not in "SDCZ":
                continue
            spec = SPEC_OF_DEVICE.get(row["device"], row["device"])
            key = (spec, *(row[c] for c in PROBLEM_COLUMNS))
            times[key][config_id(row)].append(float(row["time_s"]))
    return {k: {c: statistics.median(v) for c, v in d.items()} for k, d in times.items()}


def problem_options(key):
    spec, precision, op_a, op_b, m, n, k, lda, ldb, ldc, batch, beta = key
    return ["--gpu", spec, "-p", precision.lower(), "--opa", op_a.lower(), "--opb", op_b.lower(),
            "-m", m, "-n", n, "-k", k, "--lda", lda, "--ldb", ldb, "--ldc", ldc, "--batch", batch,
            "--beta", beta]


def reason(place):
    """A place of `space --why`'s JSON as one word: kept, a stage, or domain:PARAMETER."""
    if place["kept"]:
        return "kept"
    if place["stage"] == "domain":
        return "domain:" + re.match(r"[A-Z]+", place["reason"]).group(0)
    return place["stage"]


def places(gemmtune, domain, options, ids):
    """{config id: place} of `gemmtune space OPTIONS --why IDS`."""
    done = subprocess.run([gemmtune, "space", *options, "--domain", domain, "--format", "json",
                           "--why", *ids], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"gemmtune space failed for {' '.join(options)}: {done.stderr.strip()}")
    return {p["config"]: p for p in json.loads(done.stdout)["why"]}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gemmtune", default="build/gemmtune")
    parser.add_argument("--domain", default="full")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args(argv)
    caps, best_reasons, near_reasons = [], collections.Counter(), collections.Counter()
    for key, times in recorded_times(args.files).items():
        where = places(args.gemmtune, args.domain, problem_options(key), list(times))
        best = min(times.values())
        kept = [t for c, t in times.items() if where[c]["kept"]]
        caps.append((best / min(kept) if kept else 0.0, key))
        best_reasons[reason(where[min(times, key=times.get)])] += 1
        for c, t in times.items():
            if t <= 1.03 * best and not where[c]["kept"]:
                near_reasons[reason(where[c])] += 1
    if not caps:
        raise SystemExit("no S, D, C or Z rows with status ok in the files")
    fractions = sorted(f for f, _ in caps)
    positive = [f for f in fractions if f > 0]
    mean = statistics.geometric_mean(positive) if len(positive) == len(fractions) else 0.0
    print(f"{len(fractions)} problems: the space's best recorded / the best recorded: median "
          f"{statistics.median(fractions):.3f}, p10 {fractions[len(fractions) // 10]:.3f}, "
          f"geometric mean {mean:.3f}, {sum(f < 0.95 for f in fractions)} below 0.95, "
          f"{sum(f < 0.90 for f in fractions)} below 0.90")
    print("each problem's best:", ", ".join(f"{r} {n}" for r, n in best_reasons.most_common()))
    print("within 3% of the best, outside the space:",
          ", ".join(f"{r} {n}" for r, n in near_reasons.most_common()))
    for fraction, key in sorted(caps)[:10]:
        print(f"{fraction:.3f}  {' '.join(problem_options(key))}")


if __name__ == "__main__":
    main(sys.argv[1:])
