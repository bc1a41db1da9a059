"""Reading recordings (CSV, gzip or not, as `gemmtune export` writes them) for the bench scripts."""
import csv
import gzip

# The columns that name a problem: one device's one shape.
PROBLEM = ["device", "precision", "op_a", "op_b", "m", "n", "k", "lda", "ldb", "ldc", "batch", "beta"]


def ok_rows(paths, required=("status", "time_s")):
    """(path, row) for each row of the recordings that measured correctly; SystemExit naming the
    file and the column where a required column is missing."""
    for path in paths:
        with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
            reader = csv.DictReader(f)
            missing = set(required) - set(reader.fieldnames or [])
            if missing:
                raise SystemExit(f"{path}: no column {', '.join(sorted(missing))}")
            for row in reader:
                if row["status"] == "ok":
                    yield path, row


def problem_of(row):
    return tuple(row.get(c, "") for c in PROBLEM)
