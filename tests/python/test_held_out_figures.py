"""bench/held_out_figures.py --domain: the held-out figures over only the configurations the
zero-run space keeps, each problem judged against the best of its whole recording. A stand-in
for `gemmtune space --why` keeps every configuration but those with RS4 and logs its options."""

import csv
import os
import stat
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "held_out_figures.py")
sys.path.insert(0, os.path.join(ROOT, "bench"))

import held_out_figures  # noqa: E402

STAND_IN = """#!/usr/bin/env python3
import json, os, sys
with open(os.environ["SPACE_LOG"], "a") as log:
    log.write(" ".join(sys.argv[1:sys.argv.index("--why")]) + "\\n")
ids = sys.argv[sys.argv.index("--why") + 1:]
def place(c):
    if "_RS4_" in c:
        return {"config": c, "kept": False, "stage": "domain", "kind": "",
                "reason": "RS4 is not among the full domain's RS values (1, 8)"}
    return {"config": c, "kept": True, "stage": "", "kind": "", "reason": ""}
print(json.dumps({"why": [place(c) for c in ids]}))
"""

A = "H100-SXM:s_nn_100x64x64_b1"
B = "H100-SXM:d_tn_200x64x64_b1_ld256x64x256_beta1"


def test_space_options_read_the_problem_key():
    assert held_out_figures.space_options(B) == [
        "--gpu", "H100-SXM", "-p", "d", "--opa", "t", "--opb", "n", "-m", "200", "-n", "64",
        "-k", "64", "--lda", "256", "--ldb", "64", "--ldc", "256", "--batch", "1", "--beta", "1"]


def test_an_unreadable_key_is_named():
    try:
        held_out_figures.space_options("H100-SXM:gemm 100")
    except SystemExit as e:
        assert "H100-SXM:gemm 100" in str(e)
    else:
        raise AssertionError("no error")


def test_the_domain_figures_rank_only_kept_configurations(tmp_path):
    gemmtune = tmp_path / "gemmtune"
    gemmtune.write_text(STAND_IN)
    gemmtune.chmod(gemmtune.stat().st_mode | stat.S_IEXEC)
    rows = [
        # A: the model's first (RS4, the recording's best) is outside the space; within it the
        # first runs 10 against the recording's 8 (0.800), the best kept 9 (top 5 and ceiling 0.889)
        (A, "BM64_RS4_ED0", 8e-6, 1e-6), (A, "BM64_RS1_ED0", 10e-6, 2e-6),
        (A, "BM128_RS1_ED0", 9e-6, 3e-6),
        # B: everything kept; the first runs 6 against 5 (0.833)
        (B, "BM64_RS1_ED0", 5e-6, 2e-6), (B, "BM128_RS1_ED0", 6e-6, 1e-6),
    ]
    path = tmp_path / "out.csv"
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["fold", "setting", "problem", "config", "measured_s", "predicted_s"])
        for problem, config, measured, predicted in rows:
            writer.writerow([1, 0, problem, config, measured, predicted])
    log = tmp_path / "space.log"
    done = subprocess.run([sys.executable, SCRIPT, str(path), "H100-SXM:", "--domain", "full",
                           "--gemmtune", str(gemmtune)], capture_output=True, text=True,
                          check=True, env=dict(os.environ, SPACE_LOG=str(log)))
    lines = done.stdout.splitlines()
    assert lines[0] == "2 problems matching H100-SXM:"
    # the whole recording: A picks its best (1.000), B 0.833; Spearman 0.5 and -1
    assert lines[2].split() == ["setting", "0", "0.917", "0.850", "1.000", "1.000", "-0.250",
                                "0.913"]
    assert lines[3] == ("only the configurations the full domain keeps, against the whole "
                        "recording's best: 2 problems (0 with none kept left out); the space's "
                        "ceiling median 0.944, p10 0.900")
    # pick median of 0.800 and 0.833, p10 0.803; top 5 0.889 and 1.000
    assert lines[5].split() == ["setting", "0", "0.817", "0.803", "0.944", "0.900", "-1.000",
                                "0.816"]
    logged = log.read_text().splitlines()
    assert logged[0] == ("space --gpu H100-SXM -p s --opa n --opb n -m 100 -n 64 -k 64 --lda 0 "
                         "--ldb 0 --ldc 0 --batch 1 --beta 0 --domain full --format json")
    assert "--lda 256 --ldb 64 --ldc 256 --batch 1 --beta 1" in logged[1]
