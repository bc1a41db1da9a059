"""bench/register_groups.py: one least-squares fit of the register features per precision, mma or
SIMT, and cp.async or not, from recordings' compiler counts; spilling kernels and failed attempts
left out; a small group takes its precision's fit."""

import csv
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "register_groups.py")
sys.path.insert(0, os.path.join(ROOT, "bench"))

import register_groups  # noqa: E402

TRUE = {("S", False, False): np.array([30.0, 1.3, 0.2, 1.2, 0.6, 0.3]),
        ("D", True, True): np.array([37.0, 1.2, 0.7, 0.0, 0.0, 3.4])}


def recording(path, rows):
    header = ["precision", "op_a", "op_b", "status", "registers", "spill_bytes"] + \
        register_groups.PARAMS
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def kernel(precision, mma, ac, i):
    """A distinct kernel of the group, its parameters varied with i."""
    bm, bn, bk = 16 * (1 + i % 8), 16 * (1 + i // 8 % 8), 8 * (1 + i // 64 % 4)
    dx, dy = 8 * (1 + i % 2), 8 * (1 + i // 2 % 2)
    g = dict(BM=bm, BN=bn, BK=bk, DX=dx, DY=dy, DXA=8, DYA=8, DXB=8, DYB=8, VA=1 + i % 2,
             VB=1 + i // 3 % 2, LA=0, LB=0, PD=1, PF=0 if ac else i % 4, ST=2, UR=0, RS=1, VS=1,
             ED=0, MM=3 if mma else 0, AC=int(ac), SK=0, VC=0, SL=0)
    g["ST"] = 2 + i // 256  # with BM, BN and BK: distinct for i < 512
    return (precision, "N", "T") + tuple(g[p] for p in register_groups.PARAMS)


def rows_of(group, count):
    out = []
    for i in range(count):
        key = kernel(group[0], group[1], group[2], i)
        regs = round(float(np.dot(TRUE[group], register_groups.features(key))))  # ptxas: whole
        out.append(list(key[:3]) + ["ok", str(regs), "0"] + list(key[3:]))
    return out


def test_each_group_recovers_its_own_coefficients(tmp_path):
    rows = rows_of(("S", False, False), 300) + rows_of(("D", True, True), 300)
    # Left out: a spilling kernel and a failed attempt, whose counts are off the group's law.
    rows.append(list(kernel("S", False, False, 999)[:3]) + ["ok", "255", "64"] +
                list(kernel("S", False, False, 999)[3:]))
    rows.append(list(kernel("D", True, True, 998)[:3]) + ["wrong", "1", "0"] +
                list(kernel("D", True, True, 998)[3:]))
    path = tmp_path / "rec.csv"
    recording(path, rows)
    counts = register_groups.kernels([str(path)])
    assert len(counts) == 600
    table = register_groups.table(sorted(counts), counts)
    for group, coef in TRUE.items():
        fitted, n, miss = table[group]
        assert n == 300
        assert miss < 1  # the counts are whole registers: the rounding, no more
        # Features that never vary in a group (cp.async stages nothing) are fitted as zero.
        predicted = [np.dot(fitted, register_groups.features(kernel(*group, i))) for i in range(5)]
        actual = [np.dot(coef, register_groups.features(kernel(*group, i))) for i in range(5)]
        assert predicted == pytest.approx(actual, abs=1)


def test_a_small_group_takes_its_precision_fit(tmp_path):
    rows = rows_of(("S", False, False), 300)
    for i in range(10):  # S with cp.async: too few to fit alone
        key = kernel("S", False, True, i)
        rows.append(list(key[:3]) + ["ok", "80", "0"] + list(key[3:]))
    path = tmp_path / "rec.csv"
    recording(path, rows)
    counts = register_groups.kernels([str(path)])
    table = register_groups.table(sorted(counts), counts)
    small, n, _ = table[("S", False, True)]
    assert n == 10
    whole = register_groups.fit(sorted(k for k in counts if k[0] == "S"), counts)
    assert small == pytest.approx(whole)


def test_no_usable_kernel_is_an_error(tmp_path):
    path = tmp_path / "empty.csv"
    recording(path, [])
    r = subprocess.run([sys.executable, SCRIPT, str(path)], capture_output=True, text=True)
    assert r.returncode != 0
    assert "no compiled, non-spilling kernel" in r.stderr
    r = subprocess.run([sys.executable, SCRIPT, str(path), "--held-out", "1.5"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "--held-out 1.5" in r.stderr
