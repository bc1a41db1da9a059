"""The store's tuning runs and reference (cuBLAS) timings as rows, and the report's cuBLAS and
convergence plots drawn from them: a store built by importing recorded attempts, stamped with
two runs (hybrid, random) in the CSV's run columns, plus reference rows written as tune would."""

import csv
import json
import os
import re
import sqlite3
import subprocess

import pytest

import gemmtune
from conftest import DATA

report = pytest.importorskip("gemmtune.report", reason="the report needs matplotlib")

EXHAUSTIVE = os.path.join(DATA, "h100_exhaustive.csv")
DEVICE = "NVIDIA H100 80GB HBM3"
TUNED = ("S", "512")  # precision and size of the problem with two runs and a cuBLAS timing
PLAIN = ("D", "512")  # one without either


def recorded(precision, size, count):
    with open(EXHAUSTIVE, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["precision"] == precision and
                r["m"] == r["n"] == r["k"] == size and r["op_a"] == r["op_b"] == "N"]
    return rows[:count]


def add_reference(db, precision, size, time_s):
    """A reference row as tune stores it (the problem's row exists: its attempts were imported)."""
    n = int(size)
    with sqlite3.connect(db) as con:
        (problem_id,) = con.execute(
            "SELECT id FROM problems WHERE precision=? AND m=? AND n=? AND k=? AND batch=1",
            (precision, n, n, n)).fetchone()
        con.execute("INSERT INTO reference_times(device, problem_id, library, time_s, gflops) "
                    "VALUES(?, ?, 'cublas', ?, ?)",
                    (DEVICE, problem_id, time_s, 2.0 * n ** 3 / time_s * 1e-9))


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs")
    tuned, plain = recorded(*TUNED, 80), recorded(*PLAIN, 40)
    assert len(tuned) == 80 and len(plain) == 40
    path = folder / "runs.csv"
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=[*tuned[0].keys(), "strategy", "run", "elapsed_s"])
        writer.writeheader()
        for i, row in enumerate(tuned):
            strategy = "hybrid" if i < 40 else "random"
            writer.writerow({**row, "strategy": strategy, "run": f"{strategy}-run",
                             "elapsed_s": 0.25 * (i % 40 + 1)})
        for row in plain:  # as recorded before runs were kept
            writer.writerow({**row, "strategy": "", "run": "", "elapsed_s": ""})
    db = str(folder / "runs.db")
    result = gemmtune.import_attempts(str(path), db=db)
    assert result["rejected"] == [] and result["imported"] == 120
    add_reference(db, *TUNED, 4e-5)
    add_reference(db, *TUNED, 3e-5)
    return db


def test_attempts_carry_their_run_or_none(store):
    rows = gemmtune.attempts(db=store)
    runs = [r for r in rows if r["run"] is not None]
    assert len(runs) == 80
    assert {r["strategy"] for r in runs} == {"hybrid", "random"}
    assert sorted({r["elapsed_s"] for r in runs if r["strategy"] == "hybrid"}) == pytest.approx(
        [0.25 * i for i in range(1, 41)])
    old = [r for r in rows if r["run"] is None]
    assert len(old) == 40
    assert all(r["strategy"] is None and r["elapsed_s"] is None for r in old)


def test_references_are_rows_with_their_problem(store):
    rows = gemmtune.references(db=store)
    assert len(rows) == 2
    first = rows[0]
    assert first["library"] == "cublas"
    assert first["device"] == DEVICE
    assert first["problem"] == "s_nn_512x512x512_b1"
    assert (first["m"], first["n"], first["k"], first["precision"]) == (512, 512, 512, "S")
    assert first["time_s"] == pytest.approx(4e-5)
    assert first["gflops"] == pytest.approx(2 * 512 ** 3 / 4e-5 * 1e-9)
    assert rows[1]["time_s"] == pytest.approx(3e-5)
    assert re.match(r"20\d\d-\d\d-\d\dT", first["created_at"])
    assert gemmtune.references(db=store, device="another GPU") == []


def test_references_of_a_missing_store_fail_with_its_path(tmp_path):
    with pytest.raises(ValueError, match="no store at"):
        gemmtune.references(db=str(tmp_path / "none.db"))


def figures(page, plot):
    return re.findall(rf'data-plot="{plot}"><img alt="[^"]*" src="data:image/png;base64,'
                      r'[A-Za-z0-9+/=]+"><figcaption>([^<]*)</figcaption>', page)


def test_report_plots_tuned_against_cublas_and_both_runs(store):
    page = report.build(store)
    vs = figures(page, "vs-cublas")
    # Per problem, then the ratio against size (drawn only where cuBLAS was timed).
    assert len(vs) == 2
    assert "cuBLAS timed for 1 of them" in vs[0]
    assert "ratio of GFLOP/s" in vs[1]
    assert "no cuBLAS timing" not in page
    convergence = figures(page, "convergence")
    tuned = [c for c in convergence if "s_nn_512x512x512_b1" in c]
    assert tuned and "runs: hybrid, random" in tuned[0]
    plain = [c for c in convergence if "d_nn_512x512x512_b1" in c]
    assert plain and "runs: no run" in plain[0]
    assert "cuBLAS timed for 1;" in page


def test_report_without_cublas_timings_says_so(tmp_path):
    db = str(tmp_path / "plain.db")
    path = tmp_path / "plain.csv"
    rows = recorded(*PLAIN, 20)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    gemmtune.import_attempts(str(path), db=db)
    page = report.build(db)
    vs = figures(page, "vs-cublas")
    assert len(vs) == 1 and "cuBLAS timed for 0 of them" in vs[0]
    assert "The store holds no cuBLAS timing" in page


def command(*args):
    path = os.path.join(os.path.dirname(gemmtune.__file__), "gemmtune")
    done = subprocess.run([path, *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_export_json_keeps_the_runs_and_the_references(store, tmp_path):
    exported = tmp_path / "attempts.json"
    command("export", "--db", store, "--format", "json", "-o", str(exported))
    copy = str(tmp_path / "copy.db")
    gemmtune.import_attempts(str(exported), db=copy)
    fields = ("config", "strategy", "run", "elapsed_s")
    key = lambda r: tuple(str(r[f]) for f in fields)  # noqa: E731
    assert sorted(map(key, gemmtune.attempts(db=copy))) == sorted(
        map(key, gemmtune.attempts(db=store)))
    references = json.loads(command("export", "--db", store, "--references", "--format", "json"))
    assert [r["time_s"] for r in references] == pytest.approx([4e-5, 3e-5])
    assert {r["library"] for r in references} == {"cublas"}
