"""gemmtune from Python: the model's ranking, the store's rows, tuning on the local GPU, and a
``gemm`` on CUDA arrays (torch, CuPy, anything with DLPack or ``__cuda_array_interface__``).

Keywords are the command's option names: ``gemmtune.predict(gpu="H100-SXM", precision="s",
m=8192, n=8192, k=8192, top=20)`` ranks as ``gemmtune predict --gpu H100-SXM ...`` does.
Bad input raises ``ValueError`` with the C++ message.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any, Optional, Sequence

from . import _gemmtune
from ._arrays import gemm

__all__ = [
    "predict",
    "space",
    "source",
    "devices",
    "attempts",
    "best",
    "references",
    "import_attempts",
    "measure",
    "tune",
    "profile",
    "gemm",
    "default_db",
    "counters_beside_model",
]

Record = dict[str, Any]


def _problem(precision: str, opa: str, opb: str, m: int, n: int, k: int, lda: int, ldb: int,
             ldc: int, batch: int, alpha: float, beta: float) -> dict[str, Any]:
    return {"precision": precision, "opa": opa, "opb": opb, "m": m, "n": n, "k": k, "lda": lda,
            "ldb": ldb, "ldc": ldc, "batch": batch, "alpha": alpha, "beta": beta}


def predict(*, m: int, n: int, k: int, gpu: str = "H100-SXM", precision: str = "s",
            opa: str = "n", opb: str = "n", lda: int = 0, ldb: int = 0, ldc: int = 0,
            batch: int = 1, alpha: float = 1.0, beta: float = 0.0, top: int = 10,
            domain: str = "full", db: Optional[str] = None, calibration: str = "auto",
            shortlist: bool = False, compiled_shortlist: int = 0,
            cache: Optional[str] = None) -> list[Record]:
    """The model's top configurations, best first: one record each with ``config``,
    ``time_us``, ``gflops``, ``occupancy``, ``limit``, ``why`` and the model's terms (the
    records of ``gemmtune predict --format json``). ``compiled_shortlist=N`` compiles the
    first N with NVRTC (no GPU needed; cubins cached in ``cache``, by default the command's
    cache) and ranks them again with the compiler's registers, as ``gemmtune measure`` picks."""
    out = _gemmtune.predict(_problem(precision, opa, opb, m, n, k, lda, ldb, ldc, batch, alpha,
                                     beta), gpu, top, domain, db, calibration, shortlist,
                            compiled_shortlist, cache)
    return out["top"]


def space(*, m: int, n: int, k: int, gpu: str = "H100-SXM", precision: str = "s",
          opa: str = "n", opb: str = "n", lda: int = 0, ldb: int = 0, ldc: int = 0,
          batch: int = 1, alpha: float = 1.0, beta: float = 0.0,
          disable: Sequence[str] = (), domain: str = "full", list: bool = False) -> Record:
    """The pruning funnel: ``raw`` (the unpruned size), ``stages`` (each with ``stage``,
    ``kind`` and ``remaining``) and, with ``list=True``, ``configs`` (every surviving id)."""
    return _gemmtune.space(_problem(precision, opa, opb, m, n, k, lda, ldb, ldc, batch, alpha,
                                    beta), gpu, [str(s) for s in disable], domain, list)


def source(config: str, *, gpu: str = "H100-SXM", precision: str = "s", opa: str = "n",
           opb: str = "n", m: int = 0, n: int = 0, k: int = 0, lda: int = 0, ldb: int = 0,
           ldc: int = 0, batch: int = 1, check: bool = True) -> str:
    """The complete CUDA source of one configuration (sizes 0: checked on a square 1024 problem);
    ``check=False`` renders one that breaks a hard constraint."""
    return _gemmtune.source(config, _problem(precision, opa, opb, m, n, k, lda, ldb, ldc, batch,
                                             1.0, 0.0), gpu, check)


def devices() -> list[Record]:
    """The built-in GPU specs, each as ``gemmtune devices --json`` writes it."""
    return _gemmtune.devices()


def default_db() -> str:
    """The store used when ``db`` is not given: ``$GEMMTUNE_DB`` or the per-user default."""
    return _gemmtune.default_db()


def attempts(*, db: Optional[str] = None, device: str = "", precision: Optional[str] = None,
             opa: str = "n", opb: str = "n", m: int = 0, n: int = 0, k: int = 0, lda: int = 0,
             ldb: int = 0, ldc: int = 0, batch: int = 1, alpha: float = 1.0,
             beta: float = 0.0) -> list[Record]:
    """Every attempt in the store, oldest first, as flat records (``pandas.DataFrame(rows)``):
    the problem's fields, ``config``, ``status``, ``time_s``, ``gflops``, ``predicted_s``,
    ``counters`` (a dict, or None), ``created_at``, and the tuning run that made it:
    ``strategy``, ``run`` (its id) and ``elapsed_s`` (seconds since the run began; all None
    for attempts stored before runs were kept)... Only one device's with ``device``, only
    one problem's when ``precision`` and the sizes are given."""
    problem = None
    if precision is not None:
        problem = _problem(precision, opa, opb, m, n, k, lda, ldb, ldc, batch, alpha, beta)
    return _gemmtune.attempts(db, device, problem)


def best(*, db: Optional[str] = None, device: str = "") -> list[Record]:
    """The fastest ok attempt of each problem in the store, in ``attempts``' columns."""
    return _gemmtune.best(db, device)


def references(*, db: Optional[str] = None, device: str = "") -> list[Record]:
    """The reference (cuBLAS) timings that tune, sweep, record and measure kept, oldest first:
    ``device``, ``problem`` (the shape id) and its fields, ``library``, ``time_s``, ``gflops``,
    ``created_at``."""
    return _gemmtune.references(db, device)


def import_attempts(path: str, *, db: Optional[str] = None) -> Record:
    """Adds the attempts of a CSV (``gemmtune export``) or JSON (``export --format json``) file
    to the store: ``imported``, ``rejected`` (one line each) and ``unknown_columns``."""
    return _gemmtune.import_attempts(db, os.fspath(path))


# ---------------------------------------------------------------- on the local GPU
# Measuring runs kernels in a worker process that is restarted after a fault; the command is
# that worker, so these run it and read its JSON.

def _command_path() -> str:
    return os.environ.get("GEMMTUNE_COMMAND") or os.path.join(os.path.dirname(__file__),
                                                              "gemmtune")


def _run_command(args: list[str]) -> str:
    done = subprocess.run([_command_path(), *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()
        text = message[-1] if message else f"gemmtune {args[0]} exited with {done.returncode}"
        text = text.removeprefix("gemmtune: error: ").removeprefix("gemmtune: failed: ")
        raise (ValueError if done.returncode == 2 else RuntimeError)(text)
    return done.stdout


def _problem_args(precision: str, opa: str, opb: str, m: int, n: int, k: int, lda: int, ldb: int,
                  ldc: int, batch: int, alpha: float, beta: float) -> list[str]:
    return ["--precision", precision, "--opa", opa, "--opb", opb, "--m", str(m), "--n", str(n),
            "--k", str(k), "--lda", str(lda), "--ldb", str(ldb), "--ldc", str(ldc), "--batch",
            str(batch), "--alpha", repr(float(alpha)), "--beta", repr(float(beta))]


def measure(*, m: int, n: int, k: int, precision: str = "s", opa: str = "n", opb: str = "n",
            lda: int = 0, ldb: int = 0, ldc: int = 0, batch: int = 1, alpha: float = 1.0,
            beta: float = 0.0, config: Sequence[str] = (), top: int = 10,
            repetitions: int = 20, db: Optional[str] = None,
            calibration: str = "auto") -> Record:
    """Verifies and times the model's top ``top`` (and the ``config`` ids) on the local GPU beside
    cuBLAS: ``gemmtune measure --format json``'s record (``cublas_us``, ``configs``...)."""
    args = ["measure", *_problem_args(precision, opa, opb, m, n, k, lda, ldb, ldc, batch, alpha,
                                      beta), "--top", str(top), "--repetitions", str(repetitions),
            "--calibration", calibration, "--format", "json"]
    for c in config:
        args += ["--config", c]
    if db is not None:
        args += ["--db", os.fspath(db)]
    return json.loads(_run_command(args))


def tune(*, m: int, n: int, k: int, precision: str = "s", opa: str = "n", opb: str = "n",
         lda: int = 0, ldb: int = 0, ldc: int = 0, batch: int = 1, alpha: float = 1.0,
         beta: float = 0.0, seconds: float = 60, evaluations: int = 0, strategy: str = "hybrid",
         domain: str = "full", db: Optional[str] = None, calibration: str = "auto",
         counters: bool = False, objective: str = "time", recalibrate: bool = False,
         replay: Optional[str] = None, gpu: str = "H100-SXM") -> Optional[Record]:
    """Tunes one problem on the local GPU (or, with ``replay``, from a recording interpreted on
    ``gpu``), every attempt stored; returns the store's best attempt of the problem afterwards,
    or None when none ran correctly."""
    args = ["tune", *_problem_args(precision, opa, opb, m, n, k, lda, ldb, ldc, batch, alpha,
                                   beta), "--seconds", repr(float(seconds)), "--evaluations",
            str(evaluations), "--strategy", strategy, "--domain", domain, "--calibration",
            calibration, "--objective", objective]
    if counters:
        args.append("--counters")
    if recalibrate:
        args.append("--recalibrate")
    if replay is not None:
        args += ["--replay", os.fspath(replay), "--gpu", gpu]
    store = os.fspath(db) if db is not None else default_db()
    args += ["--db", store]
    _run_command(args)
    rows = attempts(db=store, precision=precision, opa=opa, opb=opb, m=m, n=n, k=k, lda=lda,
                    ldb=ldb, ldc=ldc, batch=batch, alpha=alpha, beta=beta)
    ok = [r for r in rows if r["status"] == "ok"]
    return min(ok, key=lambda r: r["time_s"]) if ok else None


def profile(*, m: int, n: int, k: int, precision: str = "s", opa: str = "n", opb: str = "n",
            lda: int = 0, ldb: int = 0, ldc: int = 0, batch: int = 1, alpha: float = 1.0,
            beta: float = 0.0, config: Optional[str] = None, best: bool = False,
            metrics: Optional[str] = None, db: Optional[str] = None,
            calibration: str = "auto", energy: bool = True, repetitions: int = 20) -> Record:
    """Hardware counters (CUPTI) and NVML energy of one kernel on the local GPU, each beside the
    model's figure: ``gemmtune profile --format json``'s record. ``config`` or ``best=True``."""
    if (config is None) == (not best):
        raise ValueError("profile needs either config=ID or best=True")
    args = ["profile", *_problem_args(precision, opa, opb, m, n, k, lda, ldb, ldc, batch, alpha,
                                      beta), "--calibration", calibration, "--repetitions",
            str(repetitions), "--format", "json"]
    args += ["--best"] if best else ["--config", str(config)]
    if metrics is not None:
        args += ["--metrics", metrics]
    if db is not None:
        args += ["--db", os.fspath(db)]
    if not energy:
        args.append("--no-energy")
    return json.loads(_run_command(args))


def counters_beside_model(row: Record, *, gpu: str = "H100-SXM", db: Optional[str] = None,
                          calibration: str = "auto") -> list[Record]:
    """For an attempt row with counters (``attempts``), each quantity both the hardware and the
    model give (time, occupancy, DRAM and L2 bytes, ...): ``quantity``, ``metrics``, ``counter``
    (None when the counters lack it) and ``model``."""
    if not isinstance(row.get("counters"), dict):
        raise ValueError(f"the attempt of {row.get('config')} holds no counters")
    problem = _problem(row["precision"].lower(), row["op_a"].lower(), row["op_b"].lower(),
                       row["m"], row["n"], row["k"], row["lda"], row["ldb"], row["ldc"],
                       row["batch"], row["alpha"], row["beta"])
    return _gemmtune.counters_beside_model(problem, gpu, row["config"], json.dumps(row["counters"]),
                                           row["registers"], db, calibration)
