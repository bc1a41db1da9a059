"""bench/fresh_check.py, the summary of a fresh check: each problem's pick and short tune as
fractions of its timed tune's best, and their median, geometric mean, worst and count below 0.80."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "fresh_check.py")


def write_check(directory, name, times_us, cublas_us=10.0):
    """One problem's JSON as device-fresh-check writes it: measure's results in role order."""
    roles = ["tune_evaluations", "tune_seconds", "pick"]
    results = [{"config": f"C{i}", "measured_us": t, "status": "ok"} for i, t in enumerate(times_us)]
    path = directory / f"{name}.json"
    path.write_text(json.dumps({"problem": name, "cublas_us": cublas_us, "results": results,
                                "roles": roles, "tune_attempts": 100}))
    return str(path)


def summary_lines(paths):
    done = subprocess.run([sys.executable, SCRIPT, *paths], capture_output=True, text=True,
                          check=True)
    return [line for line in done.stdout.splitlines() if " problems: " in line]


def test_fractions_of_the_timed_tune(tmp_path):
    # Timed tune 10 us in each; picks 10, 12.5 and 20 us (1.0, 0.8, 0.5); short tunes 10, 10, 11.
    paths = [write_check(tmp_path, "a", [10.0, 10.0, 10.0]),
             write_check(tmp_path, "b", [10.0, 10.0, 12.5]),
             write_check(tmp_path, "c", [11.0, 10.0, 20.0])]
    pick, short = summary_lines(paths)
    assert pick == ("3 problems: zero-run pick / the timed tune's best: median 0.800, geometric "
                    "mean 0.737, worst 0.500, 1 below 0.80")
    assert short.startswith("3 problems: best of the short tune / the timed tune's best: "
                            "median 1.000, geometric mean 0.969, worst 0.909, 0 below 0.80")


def test_a_failed_pick_counts_as_zero(tmp_path):
    path = write_check(tmp_path, "a", [10.0, 10.0, 10.0])
    check = json.loads(open(path).read())
    check["results"][2]["status"] = "failed"
    open(path, "w").write(json.dumps(check))
    pick, _ = summary_lines([path, write_check(tmp_path, "b", [10.0, 10.0, 10.0])])
    assert "worst 0.000, 1 below 0.80" in pick
    assert "geometric mean 0.000" in pick


def test_the_results_table_in_markdown(tmp_path):
    # Two problems, the timed tune's best at 10 us, another role beside the pick.
    paths = []
    for name, options, times, attempts in (
            ("a", "--precision z --opa t --opb c --m 244 --n 244 --k 966", [10.0, 10.0, 12.5, 20.0],
             783),
            ("b", "--precision c --opa c --opb n --m 66 --n 38 --k 315 --lda 322 --ldb 320 --ldc 67"
             " --beta 1 --batch 2", [11.0, 10.0, 10.0, 10.0], 1329)):
        results = [{"config": f"C{i}", "measured_us": t, "status": "ok"}
                   for i, t in enumerate(times)]
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({
            "problem": name, "options": options, "cublas_us": 1500.0 if name == "b" else 5.0,
            "results": results, "roles": ["tune_evaluations", "tune_seconds", "wide", "pick"],
            "tune_attempts": attempts}))
        paths.append(str(path))
    done = subprocess.run([sys.executable, SCRIPT, "--markdown", *paths], capture_output=True,
                          text=True, check=True)
    assert done.stdout.splitlines() == [
        "| problem | cuBLAS us | pick x | 5 evaluations x | 60 s tune x | pick / 60 s | "
        "5 evaluations / 60 s | attempts in 60 s | wide |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        "| Z TC 244x244x966 | 5.00 | 0.250 | 0.500 | 0.500 | 0.500 | 1.000 | 783 | 0.800 |",
        "| C CN 66x38x315, ld 322/320/67, beta 1, batch 2 | 1,500 | 150.000 | 136.364 | 150.000 | "
        "1.000 | 0.909 | 1,329 | 1.000 |",
        "| **median (worst)** |  |  |  |  | **0.750 (0.500)** | **0.955 (0.909)** |  | "
        "**0.900 (0.800)** |",
        "| geometric mean |  |  |  |  | 0.707 | 0.953 |  | 0.894 |",
        "| below 0.80 |  |  |  |  | 1 | 0 |  | 0 |"]
    # A check without a timed tune has no reference: the table refuses it, naming the file.
    check = json.loads(open(paths[0]).read())
    check["roles"][1] = "other"
    open(paths[0], "w").write(json.dumps(check))
    done = subprocess.run([sys.executable, SCRIPT, "--markdown", *paths], capture_output=True,
                          text=True)
    assert done.returncode != 0 and f"{paths[0]}: no timed tune" in done.stderr
