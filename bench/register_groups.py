#!/usr/bin/env python3
"""Fits the register estimate's six coefficients (model/resources.cpp, register_features) per
kernel group: precision x mma or SIMT x cp.async or not, by least squares on the compiler's counts
of every distinct non-spilling kernel in the given recordings, and prints each group's coefficients
and stated error as a C++ initializer (tried as the model's estimator and not kept: bench/RESULTS.md,
"How far a better register estimate could go"). With --held-out F, a share F of the tile shapes (BM, BN, BK, DX, DY)
is left out of the fit and the mean miss on them is printed beside that of the coefficients given
with --current, so the table is judged on shapes it was not fitted on.

    bench/register_groups.py tests/data/h100_*.csv* tests/data/h200_*.csv* [--held-out 0.2]
"""
import argparse
import csv
import gzip
import math
import random
import sys

import numpy as np

PARAMS = "BM BN BK DX DY DXA DYA DXB DYB VA VB LA LB PD PF ST UR RS VS ED MM AC SK VC SL".split()
ELEMENT_BYTES = dict(S=4, D=8, C=8, Z=16, H=2, B=2, T=4)
C_BYTES = dict(S=4, D=8, C=8, Z=16, H=4, B=4, T=4)  # H, B, T accumulate and store FP32
PRECISIONS = "SDCZHBT"
MIN_SAMPLES = 200  # a group with fewer kernels keeps the precision's fit


def kernels(paths):
    """(precision, op_a, op_b, parameters...) -> registers, non-spilling compiled kernels only."""
    seen = {}
    for path in paths:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            for r in csv.DictReader(f):
                regs = r.get("registers") or ""
                if r.get("status") != "ok" or regs in ("", "0", "-1"):
                    continue
                if float(r.get("spill_bytes") or 0) > 0:
                    continue  # the count is the cap it hit, not the kernel's demand
                key = (r["precision"], r["op_a"], r["op_b"]) + tuple(
                    int(float(r.get(p) or 0)) for p in PARAMS)
                seen[key] = int(float(regs))
    return seen


def features(key):
    """register_features of model/resources.cpp."""
    g = dict(zip(PARAMS, key[3:]))
    threads = g["DX"] * g["DY"]
    rw, rw_c = ELEMENT_BYTES[key[0]] / 4, C_BYTES[key[0]] / 4
    loads_a, loads_b = g["BM"] * g["BK"] / threads, g["BN"] * g["BK"] / threads
    pf = 0.0 if g["AC"] else (loads_a if g["PF"] & 1 else 0) + (loads_b if g["PF"] & 2 else 0)
    staged = 0.0 if g["AC"] else loads_a + loads_b - pf
    thr_m, thr_n = g["BM"] / g["DX"], g["BN"] / g["DY"]
    return [1.0, thr_m * thr_n * rw_c, (thr_m + thr_n) * rw, pf * rw, staged * rw,
            loads_a / g["VA"] + loads_b / g["VB"]]


def group(key):
    g = dict(zip(PARAMS, key[3:]))
    return key[0], g["MM"] > 0, g["AC"] > 0


def fit(keys, counts):
    x = np.array([features(k) for k in keys])
    coef, *_ = np.linalg.lstsq(x, np.array([counts[k] for k in keys], float), rcond=None)
    return coef


def estimate(coef, key):
    """estimate_registers: rounded up, within 16 and the launch-bounds cap (register_cap)."""
    g = dict(zip(PARAMS, key[3:]))
    cap = min(255, (65536 // (g["DX"] * g["DY"])) & ~7)
    return min(max(math.ceil(float(np.dot(coef, features(key)))), 16), cap)


def table(keys, counts):
    """Group -> (coefficients, kernels, largest miss): each group's own fit, or its precision's."""
    by_precision, by_group = {}, {}
    for k in keys:
        by_precision.setdefault(k[0], []).append(k)
        by_group.setdefault(group(k), []).append(k)
    precision_fit = {p: fit(ks, counts) for p, ks in by_precision.items()}
    out = {}
    for g, ks in sorted(by_group.items()):
        coef = fit(ks, counts) if len(ks) >= MIN_SAMPLES else precision_fit[g[0]]
        miss = max(abs(float(np.dot(coef, features(k))) - counts[k]) for k in ks)
        out[g] = (coef, len(ks), miss)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("recordings", nargs="+")
    ap.add_argument("--held-out", type=float, default=0.0,
                    help="share of tile shapes left out of the fit and judged (0: fit on all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--current", default="42.748,1.152,0.045,1.329,0.673,0.293;"
                    "43.940,1.101,1.181,0.989,0.131,1.007",
                    help="the shipped coefficients, S/D/C/Z then H/B/T")
    a = ap.parse_args()
    if not 0 <= a.held_out < 1:
        sys.exit(f"--held-out {a.held_out} is not a share in [0, 1)")
    counts = kernels(a.recordings)
    if not counts:
        sys.exit("no compiled, non-spilling kernel in " + " ".join(a.recordings))
    keys = sorted(counts)
    shapes = sorted({k[3:8] for k in keys})
    random.Random(a.seed).shuffle(shapes)
    held = set(shapes[: int(len(shapes) * a.held_out)])
    train = [k for k in keys if k[3:8] not in held]
    groups = table(train, counts)
    if held:
        current = [np.array([float(v) for v in part.split(",")]) for part in a.current.split(";")]
        test = [k for k in keys if k[3:8] in held]
        old = [abs(estimate(current[k[0] in "HBT"], k) - counts[k]) for k in test]
        new = [abs(estimate(groups.get(group(k), (current[k[0] in "HBT"],))[0], k) - counts[k])
               for k in test]
        print(f"{len(test)} kernels of {len(held)} held-out tile shapes: mean miss, shipped "
              f"{np.mean(old):.1f}, per group {np.mean(new):.1f}")
        for p in PRECISIONS:
            idx = [i for i, k in enumerate(test) if k[0] == p]
            if idx:
                print(f"  {p}: {len(idx)} kernels, {np.mean([old[i] for i in idx]):.1f} -> "
                      f"{np.mean([new[i] for i in idx]):.1f}")
        return
    print(f"// {len(keys)} kernels, {len(groups)} groups")
    for (p, mma, ac), (coef, n, miss) in groups.items():
        values = ", ".join(f"{c:.3f}" for c in coef)
        print(f"{{'{p}', {int(mma)}, {int(ac)}, {{{{{values}}}, {math.ceil(miss * 1.2):.1f}}}}},"
              f"  // {n} kernels, largest miss {miss:.0f}")


if __name__ == "__main__":
    main()
