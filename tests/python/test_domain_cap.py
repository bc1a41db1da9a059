"""bench/domain_cap.py: the fastest recorded configuration the zero-run space keeps, as a fraction
of the fastest recorded, per problem, with where the others leave the space. A stand-in for
`gemmtune space --why` keeps every configuration but those with RS4 (outside the domain) and UR2
(pruned by a soft stage)."""

import csv
import os
import stat
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "domain_cap.py")
sys.path.insert(0, os.path.join(ROOT, "bench"))

import domain_cap  # noqa: E402

STAND_IN = """#!/usr/bin/env python3
import json, sys
ids = sys.argv[sys.argv.index("--why") + 1:]
def place(c):
    if "_RS4_" in c:
        return {"config": c, "kept": False, "stage": "domain", "kind": "",
                "reason": "RS4 is not among the full domain's RS values (1, 8)"}
    if "_UR2_" in c:
        return {"config": c, "kept": False, "stage": "coalesced_reads", "kind": "soft", "reason": ""}
    return {"config": c, "kept": True, "stage": "", "kind": "", "reason": ""}
print(json.dumps({"why": [place(c) for c in ids]}))
"""

BASE = dict(BM="64", BN="64", BK="8", DX="16", DY="16", DXA="16", DYA="16", DXB="16", DYB="16",
            VA="1", VB="1", LA="1", LB="1", PD="1", PF="0", ST="2", UR="0", RS="1", VS="1",
            ED="0", MM="0", AC="0", SK="0", VC="0", SL="0")


def row(m, time_s, status="ok", **config):
    r = dict(device="NVIDIA H100 80GB HBM3", precision="S", op_a="N", op_b="N", m=str(m),
             n="64", k="64", lda=str(m), ldb="64", ldc=str(m), batch="1", beta="0",
             status=status, time_s=str(time_s))
    r.update(BASE)
    r.update(config)
    return r


def test_config_id_leaves_out_the_optional_zeros():
    assert domain_cap.config_id(dict(BASE, MM="2", AC="1")) == (
        "BM64_BN64_BK8_DX16_DY16_DXA16_DYA16_DXB16_DYB16_VA1_VB1_LA1_LB1_PD1_PF0_ST2_UR0_RS1_VS1_"
        "ED0_MM2_AC1")


def test_the_space_caps_each_problem_at_its_best_kept(tmp_path):
    gemmtune = tmp_path / "gemmtune"
    gemmtune.write_text(STAND_IN)
    gemmtune.chmod(gemmtune.stat().st_mode | stat.S_IEXEC)
    rows = [
        # problem 1: the best (RS4) is outside the domain, one within 3% (UR2) is pruned; the
        # space's best runs 10 against 8: 0.8
        row(100, 8e-6, RS="4"), row(100, 8.2e-6, UR="2"), row(100, 10e-6),
        # a wrong row, faster, is not a measurement
        row(100, 1e-6, status="wrong", PD="2"),
        # problem 2: its best is kept: 1.0
        row(200, 5e-6), row(200, 6e-6, RS="4"),
    ]
    path = tmp_path / "rec.csv"
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    done = subprocess.run([sys.executable, SCRIPT, "--gemmtune", str(gemmtune), str(path)],
                          capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("2 problems: the space's best recorded / the best recorded: "
                               "median 0.900, p10 0.800, geometric mean 0.894, 1 below 0.95, "
                               "1 below 0.90")
    assert lines[1] == "each problem's best: domain:RS 1, kept 1"
    assert lines[2] == "within 3% of the best, outside the space: domain:RS 1, coalesced_reads 1"
    assert lines[3].startswith("0.800  --gpu H100-SXM -p s --opa n --opb n -m 100 ")
