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
