"""bench/race_fit.py: the runner's inputs drawn again on the host, and the wrong read that
explains a wrong element of C found among its hypotheses."""

import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "race_fit.py")
sys.path.insert(0, os.path.join(ROOT, "bench"))

import race_fit  # noqa: E402

# std::mt19937(seed) through libstdc++'s uniform_real_distribution<double>(-1, 1), as
# profiler/runner.cpp's fill_random draws A (seed 11) and B (seed 23): printed by a C++ program.
FIRST_OF_A = [-0.86338630356813328, 0.32944063610372853, -0.61176875631175065,
              0.85256592031798051, -0.78964969170270316]
FIRST_OF_B = [0.3381942391941779, -0.6300230277949187, 0.56335901132107691,
              0.14781676851324543, -0.11617262883994484]


def test_the_runners_inputs_are_drawn_again_bit_for_bit():
    assert list(race_fit.runner_values(11, 5)) == FIRST_OF_A
    assert list(race_fit.runner_values(23, 5)) == FIRST_OF_B


def run(*argv):
    return subprocess.run([sys.executable, SCRIPT, *argv], capture_output=True, text=True)


def test_a_stage_read_in_place_of_another_is_named_exactly():
    # D TN 200x40x100, BK 32, steps of 8, element (17, 35): first its B step k 40-47 read as
    # zeros, then read from the tile after (the next occupant of its stage's slot).
    argv = ["--precision", "d", "--opa", "t", "--opb", "n", "--m", "200", "--n", "40", "--k",
            "100", "--bk", "32", "--step", "8", "--stages", "3"]
    args = race_fit.argparse.Namespace(precision="d", opa="t", opb="n", m=200, n=40, k=100,
                                       lda=0, ldb=0)
    ops = race_fit.Operands(args)
    a, b = ops.row_of_a(17), ops.column_of_b(35)
    zeroed = b.copy()
    zeroed[40:48] = 0
    out = run(*argv, "--element", f"17,35,{float(a @ zeroed)!r}")
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[1]
    assert "EXACT step k 40-47 read as zeros" in first, out.stdout

    shifted = b.copy()
    shifted[40:48] = b[72:80]  # a tile (32 k) later: the slot's next occupant
    got = float(a @ shifted)
    out = run(*argv, "--element", f"17,35,{got!r}")
    first = out.stdout.splitlines()[1]
    assert "EXACT B of step k 40-47 read from k 72-79" in first, out.stdout
    # The reference is the element's right value, and a near miss is not called exact.
    assert f"reference {float(a @ b)!r}" in out.stdout
    out = run(*argv, "--element", f"17,35,{got * (1 + 1e-9)!r}")
    assert "EXACT" not in out.stdout.splitlines()[1]


def test_bad_input_is_refused_with_its_value():
    argv = ["--precision", "d", "--m", "20", "--n", "20", "--k", "20", "--bk", "8", "--step", "8"]
    out = run(*argv, "--element", "20,3,1.0")
    assert out.returncode != 0 and "outside C (20 x 20)" in out.stderr
    out = run(*argv, "--element", "3,1.0")
    assert out.returncode != 0 and "'3,1.0' is not ROW,COLUMN,GOT" in out.stderr
    out = run("--precision", "d", "--m", "20", "--n", "20", "--k", "20", "--bk", "12", "--step",
              "8", "--element", "1,1,1.0")
    assert out.returncode != 0 and "--bk 12 is not a multiple of --step 8" in out.stderr
