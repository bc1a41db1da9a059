"""bench/compare_builds.py, the summary of scripts/device-compare-builds: each configuration's
median time with the old and the new build, old / new per problem and its geometric mean, and the
configurations that failed with either build left out and named."""

import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "compare_builds.py")


def write(directory, line, build, round_, problem, results):
    """One `measure --format json` output as device-compare-builds names it."""
    path = directory / f"{line:02d}_{build}_{round_}.json"
    rows = [{"config": c, "status": s, "measured_us": t} for c, t, s in results]
    path.write_text(json.dumps({"problem": problem, "cublas_us": 1.0, "results": rows}))
    return str(path)


def run(paths):
    return subprocess.run([sys.executable, SCRIPT, *paths], capture_output=True, text=True)


def summary_of(paths):
    """The summary's output, which must succeed."""
    out = run(paths)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_medians_ratios_and_failures(tmp_path):
    p = "d_nn_64x64x64_b1"
    paths = [
        # A: old 10, 12 (median 11), new 10, 10: 1.1. B: old 20, new 25, 25: 0.8.
        write(tmp_path, 1, "old", 1, p, [("A", 10.0, "ok"), ("B", 20.0, "ok"), ("W", 5.0, "ok")]),
        write(tmp_path, 1, "old", 2, p, [("A", 12.0, "ok"), ("B", 20.0, "ok"), ("W", 5.0, "ok")]),
        write(tmp_path, 1, "new", 1, p, [("A", 10.0, "ok"), ("B", 25.0, "ok"), ("W", 4.0, "ok")]),
        # W wrong once with the new build: out of the ratios, named.
        write(tmp_path, 1, "new", 2, p, [("A", 10.0, "ok"), ("B", 25.0, "ok"),
                                         ("W", 0.0, "wrong")]),
    ]
    stdout = summary_of(paths)
    assert f"| {p} | 0.800-1.100 | 1 of 2 | 11.0 -> 10.0 |" in stdout
    assert f"over 2 configurations: {math.sqrt(1.1 * 0.8):.3f}" in stdout
    assert f"left out: {p} W" in stdout


def test_a_missing_round_or_configuration_is_named(tmp_path):
    p = "z_tn_32x32x32_b1"
    paths = [
        write(tmp_path, 3, "old", 1, p, [("A", 10.0, "ok"), ("B", 8.0, "ok")]),
        write(tmp_path, 3, "old", 2, p, [("A", 10.0, "ok")]),  # stopped before B
        write(tmp_path, 3, "new", 1, p, [("A", 5.0, "ok"), ("B", 8.0, "ok")]),
    ]  # the new build's round 2 failed: no JSON
    stdout = summary_of(paths)
    assert f"| {p} | 2.000-2.000 | 1 of 1 | 10.0 -> 5.0 |" in stdout
    assert f"left out: {p} B" in stdout
    assert f"no result of the new build in round 2: {p}" in stdout


def test_bad_input_is_refused(tmp_path):
    other = tmp_path / "results.json"
    other.write_text("{}")
    out = run([str(other)])
    assert out.returncode != 0 and "not a LINE_BUILD_ROUND.json" in out.stderr
    bad = tmp_path / "01_old_1.json"
    bad.write_text("not json")
    out = run([str(bad)])
    assert out.returncode != 0 and "not a measure --format json result" in out.stderr
    a = write(tmp_path, 2, "old", 1, "d_nn_8x8x8_b1", [("A", 1.0, "ok")])
    b = write(tmp_path, 2, "new", 1, "d_nn_9x9x9_b1", [("A", 1.0, "ok")])
    out = run([a, b])
    assert out.returncode != 0 and "where line 2 holds" in out.stderr
