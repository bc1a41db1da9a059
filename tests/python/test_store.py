"""The store as rows: attempts and best per problem, after importing recorded CSV and JSON."""

import csv
import os

import pytest

import gemmtune
from conftest import DATA

SWEEPS = os.path.join(DATA, "h100_sweeps.csv")
COUNTERS = os.path.join(DATA, "h100_shortlist_counters.json")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("store") / "sweeps.db")
    report = gemmtune.import_attempts(SWEEPS, db=db)
    assert report["rejected"] == []
    return db


def recorded_rows():
    with open(SWEEPS, newline="") as f:
        return list(csv.DictReader(f))


def test_attempts_holds_every_imported_row_with_its_problem_fields(store):
    rows = gemmtune.attempts(db=store)
    recorded = recorded_rows()
    assert len(rows) == len(recorded)
    first = rows[0]
    for key in ("device", "problem", "precision", "m", "n", "k", "config", "status", "time_s",
                "gflops", "predicted_s", "counters", "created_at"):
        assert key in first
    assert sorted(r["time_s"] for r in rows) == pytest.approx(
        sorted(float(r["time_s"]) for r in recorded))


def test_attempts_of_one_problem_only(store):
    first = gemmtune.attempts(db=store)[0]
    rows = gemmtune.attempts(db=store, precision=first["precision"].lower(),
                             opa=first["op_a"].lower(), opb=first["op_b"].lower(), m=first["m"],
                             n=first["n"], k=first["k"], lda=first["lda"], ldb=first["ldb"],
                             ldc=first["ldc"])
    assert rows and all(r["problem"] == first["problem"] for r in rows)


def test_best_is_the_fastest_ok_attempt_of_each_problem(store):
    rows = gemmtune.attempts(db=store)
    fastest = {}
    for r in rows:
        if r["status"] == "ok":
            key = (r["problem"], r["lda"], r["ldb"], r["ldc"])
            fastest[key] = min(fastest.get(key, float("inf")), r["time_s"])
    best = gemmtune.best(db=store)
    assert {(r["problem"], r["lda"], r["ldb"], r["ldc"]): r["time_s"] for r in best} == fastest


def test_json_import_keeps_counters(tmp_path):
    db = str(tmp_path / "counters.db")
    assert gemmtune.import_attempts(COUNTERS, db=db)["imported"] == 80
    rows = gemmtune.attempts(db=db)
    with_counters = [r for r in rows if isinstance(r["counters"], dict)]
    assert with_counters
    assert with_counters[0]["counters"]["dram__bytes_read.sum"] > 0
    comparison = gemmtune.counters_beside_model(with_counters[0])
    assert any(c["quantity"].startswith("time") and c["counter"] > 0 and c["model"] > 0
               for c in comparison)


def test_missing_store_and_bad_file_raise_value_error(tmp_path):
    with pytest.raises(ValueError, match="no store"):
        gemmtune.attempts(db=str(tmp_path / "none.db"))
    bad = tmp_path / "bad.csv"
    bad.write_text("not,a,recording\n1,2,3\n")
    with pytest.raises(ValueError, match="holds no valid attempt"):
        gemmtune.import_attempts(str(bad), db=str(tmp_path / "bad.db"))
