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

# The first values of std::mt19937(seed) through libstdc++'s uniform_real_distribution<double>(-1,
# 1), as profiler/runner.cpp's fill_random draws A (seed 11) and B (seed 23), printed with %.17g by
# a five-line C++ program built with g++ 12 on the build host.
FIRST_OF_A = [-0.86338630356813328, 0.32944063610372853, -0.61176875631175065,
              0.85256592031798051, -0.78964969170270316]
FIRST_OF_B = [0.3381942391941779, -0.6300230277949187, 0.56335901132107691,
              0.14781676851324543, -0.11617262883994484]


def test_the_runners_inputs_are_drawn_again_bit_for_bit():
    assert list(race_fit.runner_values(11, 5)) == FIRST_OF_A
    assert list(race_fit.runner_values(23, 5)) == FIRST_OF_B


def run(*argv):
    return subprocess.run([sys.executable, SCRIPT, *argv], capture_output=True, text=True)


# D TN 200x40x100 with A's leading dimension padded to 103 (A stored K x M: op(A)[m, k] at
# k + m * lda) and B packed (op N: B[k, n] at k + n * 100), BK 32, steps of 8, element (17, 35).
M, N, K, LDA = 200, 40, 100, 103
ARGV = ["--precision", "d", "--opa", "t", "--opb", "n", "--m", str(M), "--n", str(N), "--k",
        str(K), "--lda", str(LDA), "--bk", "32", "--step", "8", "--stages", "3"]


def a_row_b_col():
    a = race_fit.runner_values(11, LDA * M)
    b = race_fit.runner_values(23, K * N)
    return (np.array([a[k + 17 * LDA] for k in range(K)]),
            np.array([b[k + 35 * K] for k in range(K)]))


def first_hypothesis(got, want):
    out = run(*ARGV, "--element", f"17,35,{got!r},{want!r}")
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()[1]


def test_a_read_of_zeros_or_of_another_stage_is_named():
    a, b = a_row_b_col()
    want = float(a @ b)
    zeroed = b.copy()
    zeroed[40:48] = 0
    assert "MATCH step k 40-47 read as zeros" in first_hypothesis(float(a @ zeroed), want)
    shifted = b.copy()
    shifted[40:48] = b[72:80]  # a tile (32 k) later: the slot's next occupant
    assert "MATCH B of step k 40-47 read from k 72-79" in first_hypothesis(float(a @ shifted), want)
    both = np.concatenate([a[:64], a[0:32], a[96:]]) @ np.concatenate([b[:64], b[0:32], b[96:]])
    assert "MATCH A and B of tile k 64-95 read from k 0-31" in first_hypothesis(float(both), want)
    # A value off the hypotheses by far more than rounding matches none.
    assert "MATCH" not in first_hypothesis(float(a @ shifted) * (1 + 1e-9), want)


def test_a_step_counted_twice_or_another_blocks_column_is_named():
    a, b = a_row_b_col()
    want = float(a @ b)
    twice = want + float(a[8:16] @ b[8:16])
    assert "MATCH step k 8-15 counted twice" in first_hypothesis(twice, want)
    # B's step k 40-47 of column 35 - 16 (the block column before, BN 16) in place of its own.
    other = race_fit.runner_values(23, K * N)[19 * K:20 * K]
    from_block = b.copy()
    from_block[40:48] = other[40:48]
    out = run(*ARGV, "--bn", "16", "--element", f"17,35,{float(a @ from_block)!r},{want!r}")
    assert out.returncode == 0, out.stderr
    assert "MATCH B of step k 40-47 read from column 19, k 40-47" in out.stdout.splitlines()[1]
    # Without --bn no other block is looked at.
    assert "MATCH" not in first_hypothesis(float(a @ from_block), want)
    out = run(*ARGV, "--bm", "-1", "--element", "17,35,1.0")
    assert out.returncode != 0 and "--bm -1 must be 0 (not looked at) or more" in out.stderr


def test_single_precision_matches_within_its_rounding():
    argv = ["--precision", "s", "--m", "64", "--n", "64", "--k", "744", "--bk", "32", "--step",
            "8"]
    ops = race_fit.Operands(race_fit.argparse.Namespace(precision="s", opa="n", opb="n", m=64,
                                                        n=64, k=744, lda=0, ldb=0))
    a, b = ops.row_of_a(5).astype(np.float32), ops.column_of_b(9).astype(np.float32)
    b[128:136] = 0
    got = float(np.float32(sum(np.float32(x) * np.float32(y) for x, y in zip(a, b))))
    out = run(*argv, "--element", f"5,9,{got!r}")
    assert "MATCH step k 128-135 read as zeros" in out.stdout.splitlines()[1], out.stdout


def test_bad_input_is_refused_with_its_value():
    argv = ["--precision", "d", "--m", "20", "--n", "20", "--k", "20", "--bk", "8", "--step", "8"]
    out = run(*argv, "--element", "20,3,1.0")
    assert out.returncode != 0 and "outside C (20 x 20)" in out.stderr
    out = run(*argv, "--element", "3,1.0")
    assert out.returncode != 0 and "'3,1.0' is not ROW,COLUMN,GOT[,WANT]" in out.stderr
    out = run(*argv, "--element", "3,1,nan")
    assert out.returncode != 0 and "unwritten or overflowed" in out.stderr
    out = run(*argv, "--element", "3,1,1.0,0.25")
    assert out.returncode != 0 and "the message's reference 0.25 is not this problem's" in out.stderr
    out = run(*argv[:-2], "--step", "0", "--element", "3,1,1.0")
    assert out.returncode != 0 and "--step 0 must be at least 1" in out.stderr
    out = run("--precision", "d", "--m", "20", "--n", "20", "--k", "20", "--bk", "12", "--step",
              "8", "--element", "1,1,1.0")
    assert out.returncode != 0 and "--bk 12 is not a multiple of --step 8" in out.stderr


def test_elements_are_read_from_the_gpu_tests_xml_report(tmp_path):
    # Catch2's XML: a failed check's messages as <Info> before it (the problem and configuration,
    # then the error); the same failure checked thrice; one element of another problem, one
    # unwritten.
    a, b = a_row_b_col()
    want = float(a @ b)
    wrong = b.copy()
    wrong[40:48] = b[72:80]
    got = float(a @ wrong)
    config = "BM16_BN32_BK32_DX8_DY16_ST3_MM3_AC1"
    error = (f"relative error 0.01 exceeds 1e-11; 2 of 8000 elements off in 2 of 70 C tiles of "
             f"16x32: tile (1, 1) 1 at rows 17-17, columns 35-35, worst (17, 35) {got!r} for "
             f"{want!r}; tile (2, 1) 1 at rows 40-40, columns 36-36, worst (40, 36) nan for 0.5")
    check = (f"<Info>\n  d_tn_200x40x100_b1 lda 103\n  {config} ptxas info : 79 registers\n</Info>"
             f"<Info>{error}</Info><Expression success=\"false\" type=\"CHECK\"/>")
    other = ("<Info>d_tn_29x1237x215_b1 lda 215 BM16_BN32_BK32_DX8_DY16_ST4</Info>"
             "<Info>relative error 0.1; worst (3, 4) 1.5 for 2.5</Info>"
             "<Expression success=\"false\" type=\"CHECK\"/>")
    report = tmp_path / "run.xml"
    report.write_text(f"<Catch><Group><TestCase>{check * 3}{other}</TestCase></Group></Catch>")
    assert race_fit.catch_elements(str(report), "d_tn_200x40x100_b1") == [
        (config, f"17,35,{got!r},{want!r}"), (config, "40,36,nan,0.5")]
    out = run(*ARGV, "--catch-xml", str(report))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"{report}: 2 wrong elements of d_tn_200x40x100_b1"
    assert lines[1] == config
    assert "MATCH B of step k 40-47 read from k 72-79" in lines[3]
    assert "(40, 36): nan, unwritten or overflowed, not a wrong read" in out.stdout
    # A report with nothing of this problem, or not a report at all, says so.
    out = run(*ARGV[:11], "99", *ARGV[12:], "--catch-xml", str(report))  # K 99: another problem
    assert out.returncode != 0 and "no element to explain" in out.stderr
    (tmp_path / "bad.xml").write_text("not xml")
    out = run(*ARGV, "--catch-xml", str(tmp_path / "bad.xml"))
    assert out.returncode != 0 and "not a readable XML report" in out.stderr
