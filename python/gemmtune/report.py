"""One self-contained HTML page of plots of a store (images embedded):

    python -m gemmtune.report --db STORE -o report.html

predicted vs measured time per problem, tuning convergence per stored tuning run (against
evaluations and seconds), tuned GFLOP/s per problem and against size beside the cuBLAS timings
the store keeps, a roofline with each problem's best kernel, and counters beside the model's
figures for profiled kernels. Every figure names its problems, device, dates and units.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import html
import io
import math
import sys
import time
from collections import defaultdict
from typing import Any, Optional, Sequence

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import gemmtune  # noqa: E402

# Section ids, in page order: each is an HTML id the page holds once it has its plot.
PLOTS = ("predicted-vs-measured", "convergence", "vs-cublas", "gflops-vs-size", "roofline",
         "counters")
_PER_FIGURE = 12  # problems per figure of small multiples
_SEEDS = 25  # random orders replayed for the random strategy's curve


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation, ties given their mean rank; NaN below 3 points."""
    if len(x) < 3:
        return float("nan")

    def ranks(v: np.ndarray) -> np.ndarray:
        order = np.argsort(v, kind="mergesort")
        r = np.empty(len(v))
        r[order] = np.arange(len(v))
        _, inverse, counts = np.unique(v, return_inverse=True, return_counts=True)
        sums = np.bincount(inverse, weights=r)
        return (sums / counts)[inverse]

    rx, ry = ranks(np.asarray(x, float)), ranks(np.asarray(y, float))
    sx, sy = rx.std(), ry.std()
    if sx == 0 or sy == 0:
        return float("nan")
    return float(((rx - rx.mean()) * (ry - ry.mean())).mean() / (sx * sy))


class Problem:
    """The attempts of one problem on one device, oldest first."""

    def __init__(self, rows: list[dict[str, Any]]):
        first = rows[0]
        self.rows = rows
        self.device = first["device"]
        self.precision = first["precision"].lower()
        self.m, self.n, self.k, self.batch = first["m"], first["n"], first["k"], first["batch"]
        packed = (first["lda"], first["ldb"], first["ldc"]) == self.packed_lds(first)
        self.label = first["problem"] + ("" if packed else
                                         f" ld{first['lda']},{first['ldb']},{first['ldc']}")
        self.ok = [r for r in rows if r["status"] == "ok" and r["time_s"] > 0]
        self.best = min(self.ok, key=lambda r: r["time_s"]) if self.ok else None
        self.flops = 2.0 * self.m * self.n * self.k * self.batch * (
            4 if self.precision in "cz" else 1)
        element = {"s": 4, "d": 8, "c": 8, "z": 16}[self.precision]
        # What a kernel must move at least: A, B and C once (C twice with beta).
        c_passes = 2 if first["beta"] != 0 else 1
        self.compulsory_bytes = element * self.batch * (
            self.m * self.k + self.k * self.n + c_passes * self.m * self.n)
        self.cublas_gflops: Optional[float] = None

    @staticmethod
    def packed_lds(r: dict[str, Any]) -> tuple[int, int, int]:
        a_rows = r["m"] if r["op_a"].lower() == "n" else r["k"]
        b_rows = r["k"] if r["op_b"].lower() == "n" else r["n"]
        return a_rows, b_rows, r["m"]

    @property
    def family(self) -> str:
        ops = "".join(o for o in self.label.split("_")[1])
        return f"{self.precision.upper()} {ops.upper()}" + (" batched" if self.batch > 1 else "")


def _dates(rows: list[dict[str, Any]]) -> str:
    days = sorted({r["created_at"][:10] for r in rows if r.get("created_at")})
    if not days:
        return "undated"
    return days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"


def _png(fig: Any) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


class Page:
    def __init__(self, title: str):
        self.title = title
        self.parts: list[str] = []
        self.figures: dict[str, int] = defaultdict(int)

    def section(self, plot_id: str, heading: str, text: str) -> None:
        self.parts.append(f'<h2 id="{plot_id}">{html.escape(heading)}</h2>'
                          f"<p>{html.escape(text)}</p>")

    def figure(self, plot_id: str, fig: Any, caption: str) -> None:
        self.figures[plot_id] += 1
        self.parts.append(
            f'<figure class="plot" data-plot="{plot_id}">'
            f'<img alt="{html.escape(caption)}" src="data:image/png;base64,{_png(fig)}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")

    def note(self, text: str) -> None:
        self.parts.append(f'<p class="note">{html.escape(text)}</p>')

    def table(self, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) +
                       "</tr>" for row in rows)
        self.parts.append(f"<table><tr>{head}</tr>{body}</table>")

    def html(self) -> str:
        style = ("body{font-family:sans-serif;max-width:1200px;margin:auto}"
                 "img{max-width:100%}figcaption{font-size:90%;color:#444}"
                 "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
                 ".note{color:#a40}")
        return (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>"
                f"{html.escape(self.title)}</title><style>{style}</style></head><body>"
                f"<h1>{html.escape(self.title)}</h1>" + "\n".join(self.parts) +
                "</body></html>\n")


def _device_spec(gpu: str) -> dict[str, Any]:
    for d in gemmtune.devices():
        if d["name"] == gpu:
            return d
    names = ", ".join(d["name"] for d in gemmtune.devices())
    raise ValueError(f"gpu '{gpu}' is not a built-in spec ({names})")


def _predicted_vs_measured(page: Page, problems: list[Problem], device: str) -> None:
    page.section("predicted-vs-measured", "Predicted vs measured time",
                 "Each ok attempt at the model's time when it was made (predicted_s) against its "
                 "measured median; Spearman's rho per problem; the zero-run pick (the attempt the "
                 "model ranked fastest) is starred, the measured best ringed.")
    shown = [p for p in problems if sum(r["predicted_s"] > 0 for r in p.ok) >= 2]
    if not shown:
        page.note("No problem has two ok attempts with a predicted time.")
        return
    for start in range(0, len(shown), _PER_FIGURE):
        chunk = shown[start:start + _PER_FIGURE]
        cols = 4
        rows = math.ceil(len(chunk) / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(13, 3.1 * rows + 0.4), squeeze=False)
        for ax, p in zip(axes.flat, chunk):
            ok = [r for r in p.ok if r["predicted_s"] > 0]
            pred = np.array([r["predicted_s"] for r in ok]) * 1e6
            meas = np.array([r["time_s"] for r in ok]) * 1e6
            ax.scatter(pred, meas, s=4, alpha=0.4, rasterized=True)
            pick = int(np.argmin(pred))
            best = int(np.argmin(meas))
            ax.scatter(pred[pick], meas[pick], marker="*", s=140, color="red",
                       label="zero-run pick")
            ax.scatter(pred[best], meas[best], s=90, facecolors="none", edgecolors="green",
                       label="measured best")
            lo, hi = min(pred.min(), meas.min()), max(pred.max(), meas.max())
            ax.plot([lo, hi], [lo, hi], color="grey", linewidth=0.8)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{p.label}\nrho {spearman(pred, meas):.2f}, {len(ok)} kernels, pick at "
                         f"{meas[best] / meas[pick]:.0%} of best", fontsize=8)
            ax.set_xlabel("predicted (us)", fontsize=8)
            ax.set_ylabel("measured (us)", fontsize=8)
            ax.tick_params(labelsize=7)
            # Labelled minor ticks overlap on axes this small, unless no decade is in view.
            for axis, values in ((ax.xaxis, pred), (ax.yaxis, meas)):
                if values.max() > 10 * values.min():
                    axis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        for ax in list(axes.flat)[len(chunk):]:
            ax.axis("off")
        axes.flat[0].legend(fontsize=7)
        dates = _dates([r for p in chunk for r in p.rows])
        fig.suptitle(f"Predicted vs measured kernel time (us), log-log - {device} - measured "
                     f"{dates}", fontsize=11)
        # Fixed margins: tight_layout costs seconds on a grid of log axes.
        fig.subplots_adjust(left=0.06, right=0.98, bottom=0.06, top=1 - 0.9 / (3.1 * rows + 0.4),
                            wspace=0.3, hspace=0.55)
        page.figure("predicted-vs-measured", fig,
                    f"Problems {', '.join(p.label for p in chunk)} on {device}, measured {dates}; "
                    "times in microseconds.")


def _best_so_far(times: np.ndarray) -> np.ndarray:
    return np.minimum.accumulate(times)


def _runs(p: Problem) -> list[tuple[str, list[dict[str, Any]]]]:
    """The tuning runs stored for a problem, in the order they began, each labelled with its
    strategy (numbered where one strategy ran more than once); attempts stored without a run
    (before runs were kept, or imported without) form none."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for r in p.rows:
        if r.get("run") and r.get("strategy"):
            runs.setdefault(r["run"], []).append(r)
    count: dict[str, int] = defaultdict(int)
    for rows in runs.values():
        count[rows[0]["strategy"]] += 1
    seen: dict[str, int] = defaultdict(int)
    out = []
    for rows in runs.values():
        strategy = rows[0]["strategy"]
        seen[strategy] += 1
        out.append((strategy if count[strategy] == 1 else f"{strategy} #{seen[strategy]}", rows))
    return out


def _run_curve(rows: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]:
    """Evaluations, best time so far (us; inf until the first ok attempt: a failed one costs an
    evaluation too) and seconds since the run began (None when a row lacks them)."""
    times = np.array([r["time_s"] * 1e6 if r["status"] == "ok" and r["time_s"] > 0 else np.inf
                      for r in rows])
    elapsed = [r.get("elapsed_s") for r in rows]
    seconds = None if any(e is None for e in elapsed) else np.maximum(np.array(elapsed), 1e-3)
    return np.arange(1, len(rows) + 1), _best_so_far(times), seconds


def _convergence(page: Page, problems: list[Problem], device: str, count: int) -> None:
    page.section("convergence", "Tuning convergence",
                 "Best time so far against evaluations and against seconds since the run began, "
                 "one line per stored tuning run (its strategy: hybrid, random, sweep...), so "
                 "that the hybrid and the random strategy sit side by side where both ran. "
                 "Where no random run was stored, random search is replayed over the problem's "
                 f"attempts (median and 10-90% band of {_SEEDS} orders; seconds: the GPU time "
                 "spent timing, median x repetitions). Attempts stored without their run are "
                 "drawn in the store's order.")
    # Problems with most strategies first (a hybrid beside a random run), then most attempts.
    shown = sorted((p for p in problems if len(p.ok) >= 2),
                   key=lambda p: (-len({s for s, _ in _runs(p)}), -len(p.ok)))[:count]
    if not shown:
        page.note("No problem has two ok attempts.")
        return
    rng = np.random.default_rng(1)
    for p in shown:
        runs = _runs(p)
        fig, (by_count, by_time) = plt.subplots(1, 2, figsize=(12, 3.6))
        untimed = []
        for label, rows in runs:
            evaluations, best, seconds = _run_curve(rows)
            line, = by_count.step(evaluations, best, where="post", label=label)
            if seconds is None:
                untimed.append(label)
            else:
                by_time.step(seconds, best, where="post", label=label, color=line.get_color())
        loose = [r for r in p.rows if not (r.get("run") and r.get("strategy"))]
        if loose:
            evaluations, best, _ = _run_curve(loose)
            line, = by_count.step(evaluations, best, where="post",
                                  label="no run stored (store order)")
            cost = np.cumsum([r["time_s"] * max(r["repetitions"], 1) for r in loose])
            by_time.step(np.maximum(cost, 1e-6), best, where="post", color=line.get_color(),
                         label="no run stored (GPU timing seconds)")
        if not any(label.startswith("random") for label, _ in runs):
            times = np.array([r["time_s"] for r in p.ok]) * 1e6
            cost = np.array([r["time_s"] * max(r["repetitions"], 1) for r in p.ok])
            evaluations = np.arange(1, len(times) + 1)
            orders = [rng.permutation(len(times)) for _ in range(_SEEDS)]
            curves = np.array([_best_so_far(times[o]) for o in orders])
            by_count.plot(evaluations, np.median(curves, axis=0), label="random (replayed)",
                          color="grey")
            by_count.fill_between(evaluations, np.percentile(curves, 10, axis=0),
                                  np.percentile(curves, 90, axis=0), alpha=0.2, color="grey")
            seconds = np.median(np.array([np.cumsum(cost[o]) for o in orders]), axis=0)
            by_time.plot(seconds, np.median(curves, axis=0), color="grey",
                         label="random (replayed; GPU timing seconds)")
        for ax, xlabel in ((by_count, "evaluations"),
                           (by_time, "seconds since the run began (s)" if not loose and
                            any(label.startswith("random") for label, _ in runs)
                            else "seconds (s): since the run began, or as the legend says")):
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(xlabel)
            ax.set_ylabel("best time so far (us)")
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=8)
        if untimed:
            by_time.set_title("no seconds stored for: " + ", ".join(untimed), fontsize=8)
        dates = _dates(p.rows)
        strategies = ", ".join(sorted({label.split(" #")[0] for label, _ in runs})) or "no run"
        fig.suptitle(f"Convergence of {p.label} ({strategies}) - {device} - measured {dates}",
                     fontsize=11)
        fig.subplots_adjust(left=0.07, right=0.98, bottom=0.15, top=0.86, wspace=0.25)
        page.figure("convergence", fig,
                    f"Problem {p.label} on {device}, measured {dates}; runs: {strategies}; best "
                    "time in microseconds against evaluations and seconds.")


def _vs_cublas(page: Page, problems: list[Problem], device: str, spec: dict[str, Any]) -> None:
    shown = [p for p in problems if p.best]
    page.section("vs-cublas", "Tuned GFLOP/s against cuBLAS",
                 "The best ok attempt of each problem beside cuBLAS's GFLOP/s on the same "
                 "problem where the store holds a cuBLAS timing (tune, sweep, record and measure "
                 f"keep one), and the peak of {spec['name']} for the precision; then the tuned "
                 "kernel's speed over cuBLAS's against size, per family.")
    if not shown:
        page.note("No problem has an ok attempt.")
        return
    cublas = {p.label: p.cublas_gflops for p in shown if p.cublas_gflops}
    absent = "The store holds no cuBLAS timing of these problems: the tuned kernels appear alone."
    if not cublas:
        page.note(absent)
    shown.sort(key=lambda p: p.best["gflops"])
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.22 * len(shown)))
    y = np.arange(len(shown))
    ax.barh(y, [p.best["gflops"] for p in shown], height=0.7, label="gemmtune (tuned)")
    cy = [i for i, p in enumerate(shown) if p.label in cublas]
    if cy:
        ax.scatter([cublas[shown[i].label] for i in cy], cy, color="black", marker="|", s=120,
                   zorder=3, label="cuBLAS")
    else:
        ax.text(0.5, 0.5, "no cuBLAS timing stored", transform=ax.transAxes, ha="center",
                va="center", fontsize=14, color="#a40", alpha=0.8)
    ax.scatter([spec["peak_gflops"][p.precision] for p in shown], y, color="red", marker="x",
               s=20, label=f"{spec['name']} peak")
    ax.set_yticks(y)
    ax.set_yticklabels([p.label for p in shown], fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("GFLOP/s")
    ax.legend(fontsize=8, loc="lower right")
    dates = _dates([r for p in shown for r in p.rows])
    ax.set_title(f"Tuned GFLOP/s per problem - {device} - measured {dates}", fontsize=11)
    fig.tight_layout()
    page.figure("vs-cublas", fig, f"{len(shown)} problems on {device}, measured {dates}; "
                f"GFLOP/s (useful flops of the problem per second of kernel time); cuBLAS "
                f"timed for {len(cy)} of them.")
    if not cublas:
        return
    families: dict[str, list[Problem]] = defaultdict(list)
    for p in shown:
        if p.label in cublas:
            families[p.family].append(p)
    fig, ax = plt.subplots(figsize=(10, 4.5))
    for name, members in sorted(families.items()):
        members.sort(key=lambda p: p.m * p.n * p.k)
        ax.plot([(p.m * p.n * p.k) ** (1 / 3) for p in members],
                [p.best["gflops"] / cublas[p.label] for p in members], marker="o",
                markersize=4, linestyle="-" if len(members) > 1 else "none",
                label=f"{name} ({len(members)})")
    ax.axhline(1, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("size: (M N K)^(1/3)")
    ax.set_ylabel("tuned GFLOP/s / cuBLAS GFLOP/s")
    ax.legend(fontsize=7, ncol=2)
    ax.set_title(f"Tuned over cuBLAS against size - {device} - measured {dates}", fontsize=11)
    fig.tight_layout()
    page.figure("vs-cublas", fig, f"{len(cy)} problems with a cuBLAS timing on {device}, "
                f"measured {dates}; ratio of GFLOP/s (above 1: the tuned kernel is faster).")


def _gflops_vs_size(page: Page, problems: list[Problem], device: str) -> None:
    page.section("gflops-vs-size", "GFLOP/s against size, per family",
                 "Each problem's best GFLOP/s against the geometric mean of M, N and K, one "
                 "line per family (precision, op shape, batched or not), and cuBLAS's (dashed, "
                 "crosses) where the store holds its timing.")
    families: dict[str, list[Problem]] = defaultdict(list)
    for p in problems:
        if p.best:
            families[p.family].append(p)
    if not families:
        page.note("No problem has an ok attempt.")
        return
    fig, ax = plt.subplots(figsize=(10, 5))
    for name, members in sorted(families.items()):
        members.sort(key=lambda p: p.m * p.n * p.k)
        size = [(p.m * p.n * p.k) ** (1 / 3) for p in members]
        line, = ax.plot(size, [p.best["gflops"] for p in members], marker="o", markersize=4,
                        linestyle="-" if len(members) > 1 else "none",
                        label=f"{name} ({len(members)})")
        timed = [(x, p.cublas_gflops) for x, p in zip(size, members) if p.cublas_gflops]
        if timed:
            ax.plot(*zip(*timed), marker="x", markersize=4, color=line.get_color(),
                    linestyle="--" if len(timed) > 1 else "none", label=f"{name} cuBLAS")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("size: (M N K)^(1/3)")
    ax.set_ylabel("GFLOP/s")
    ax.legend(fontsize=7, ncol=2)
    dates = _dates([r for p in problems for r in p.rows])
    ax.set_title(f"Best GFLOP/s against problem size - {device} - measured {dates}", fontsize=11)
    fig.tight_layout()
    page.figure("gflops-vs-size", fig,
                f"All {sum(len(m) for m in families.values())} problems with an ok attempt on "
                f"{device}, measured {dates}; GFLOP/s against the size in elements.")


def _dram_bytes(counters: Optional[dict[str, Any]]) -> Optional[float]:
    if not isinstance(counters, dict):
        return None
    read, write = counters.get("dram__bytes_read.sum"), counters.get("dram__bytes_write.sum")
    return float(read) + float(write) if read is not None and write is not None else None


def _roofline(page: Page, problems: list[Problem], device: str, spec: dict[str, Any]) -> None:
    page.section("roofline", f"Roofline of the {spec['name']}",
                 "Each problem's best kernel at its arithmetic intensity: flops over the DRAM "
                 "bytes its counters measured where the store has them (filled), else over the "
                 "bytes the problem must move at least (A, B and C once; hollow). Every kernel "
                 "with counters is drawn as well.")
    bandwidth = spec["dram_bandwidth_gbs"]
    fig, ax = plt.subplots(figsize=(10, 5.5))
    intensity = np.logspace(-1, 4, 200)
    roofs: dict[float, list[str]] = defaultdict(list)
    for precision, label in (("s", "FP32"), ("d", "FP64")):
        roofs[spec["peak_gflops"][precision]].append(label)
    for peak, labels in roofs.items():  # one line where the peaks are equal
        ax.plot(intensity, np.minimum(peak, bandwidth * intensity), label=f"{' and '.join(labels)}"
                f" roof ({peak:.0f} GFLOP/s, {bandwidth:.0f} GB/s)")
    placed = 0
    for p in problems:
        measured = [r for r in p.ok if _dram_bytes(r.get("counters"))]
        for r in measured:
            ax.scatter(p.flops / _dram_bytes(r["counters"]), r["gflops"], s=18, color="C2",
                       zorder=3)
            placed += 1
        if p.best and not _dram_bytes(p.best.get("counters")):
            ax.scatter(p.flops / p.compulsory_bytes, p.best["gflops"], s=18, facecolors="none",
                       edgecolors="C3", zorder=3)
            placed += 1
    ax.scatter([], [], s=18, color="C2", label="by counters")
    ax.scatter([], [], s=18, facecolors="none", edgecolors="C3", label="by compulsory bytes")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (flop/byte)")
    ax.set_ylabel("GFLOP/s")
    ax.legend(fontsize=8)
    dates = _dates([r for p in problems for r in p.rows])
    ax.set_title(f"Roofline of the {spec['name']}: {placed} kernels measured on {device}, "
                 f"{dates}", fontsize=11)
    fig.tight_layout()
    page.figure("roofline", fig, f"Kernels of {len(problems)} problems on {device}, measured "
                f"{dates}; GFLOP/s against flop per DRAM byte.")


def _counters(page: Page, problems: list[Problem], device: str, gpu: str, db: str,
              calibration: str, count: int) -> None:
    page.section("counters", "Counters beside the model",
                 "For profiled kernels (attempts stored with counters: gemmtune profile, tune "
                 "--counters), each quantity both the hardware and the model give, as the ratio "
                 f"counter / model (the model of {gpu}, with the compiler's registers).")
    profiled = []
    for p in problems:
        with_counters = [r for r in p.ok if isinstance(r.get("counters"), dict)]
        if with_counters:
            profiled.append((p, min(with_counters, key=lambda r: r["time_s"])))
    if not profiled:
        page.note("No attempt in this store holds counters.")
        return
    for p, row in profiled[:count]:
        rows = [c for c in gemmtune.counters_beside_model(row, gpu=gpu, db=db,
                                                          calibration=calibration)
                if c["counter"] is not None and c["model"]]
        if not rows:
            continue
        fig, ax = plt.subplots(figsize=(10, 0.8 + 0.3 * len(rows)))
        ratios = [c["counter"] / c["model"] for c in rows]
        y = np.arange(len(rows))
        ax.barh(y, ratios, color=["C0" if 0.5 <= r <= 2 else "C3" for r in ratios])
        ax.axvline(1, color="black", linewidth=0.8)
        ax.set_yticks(y)
        ax.set_yticklabels([c["quantity"] for c in rows], fontsize=8)
        ax.set_xscale("log")
        ax.set_xlabel("counter / model (ratio; 1 = the model's figure)")
        dates = _dates([row])
        ax.set_title(f"{p.label}, {row['time_s'] * 1e6:.1f} us - {device} - profiled {dates}\n"
                     f"{row['config']}", fontsize=9)
        fig.tight_layout()
        page.figure("counters", fig, f"Problem {p.label} on {device}, profiled {dates}: "
                    "counters over the model's figures (unitless ratios; values below).")
        page.table(("quantity", "counter", "model", "metrics"),
                   [(c["quantity"], f"{c['counter']:.4g}", f"{c['model']:.4g}", c["metrics"])
                    for c in rows])


def build(db: str, *, gpu: str = "H100-SXM", device: str = "", calibration: str = "auto",
          convergence: int = 6, profiled: int = 4) -> str:
    """The report of the store at ``db`` as one HTML page. ``gpu``: the built-in spec the
    roofline and the model use; ``device``: only the attempts of this store device."""
    spec = _device_spec(gpu)
    rows = gemmtune.attempts(db=db, device=device)
    if not rows:
        raise ValueError(f"the store {db} has no attempts" + (f" on {device}" if device else ""))
    grouped: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        grouped[(r["device"], r["problem"], r["lda"], r["ldb"], r["ldc"], r["alpha"],
                 r["beta"])].append(r)
    problems = [Problem(g) for g in grouped.values()]
    # The latest cuBLAS timing of each problem.
    cublas = {}
    for r in gemmtune.references(db=db, device=device):
        if r["library"] == "cublas":
            cublas[(r["device"], r["problem"], r["lda"], r["ldb"], r["ldc"], r["alpha"],
                    r["beta"])] = r["gflops"]
    for key, p in zip(grouped, problems):
        p.cublas_gflops = cublas.get(key)
    devices = sorted({p.device for p in problems})
    device_text = ", ".join(devices)
    page = Page(f"gemmtune report: {db}")
    generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    page.note(f"{len(rows)} attempts of {len(problems)} problems on {device_text}, measured "
              f"{_dates(rows)}; cuBLAS timed for {sum(1 for p in problems if p.cublas_gflops)}; "
              f"generated {generated} UTC. Times in microseconds, rates in "
              "GFLOP/s.")
    _predicted_vs_measured(page, problems, device_text)
    _convergence(page, problems, device_text, convergence)
    _vs_cublas(page, problems, device_text, spec)
    _gflops_vs_size(page, problems, device_text)
    _roofline(page, problems, device_text, spec)
    _counters(page, problems, device_text, gpu, db, calibration, profiled)
    return page.html()


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gemmtune.report", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default=None, help="the store (default: gemmtune's default)")
    parser.add_argument("-o", "--output", default="report.html", help="the HTML file to write")
    parser.add_argument("--gpu", default="H100-SXM",
                        help="built-in spec of the roofline and the model (default H100-SXM)")
    parser.add_argument("--device", default="", help="only this store device's attempts")
    parser.add_argument("--calibration", default="auto", help="as predict's --calibration")
    parser.add_argument("--convergence", type=int, default=6,
                        help="problems with a convergence plot (those with most attempts)")
    parser.add_argument("--profiled", type=int, default=4, help="profiled kernels shown")
    args = parser.parse_args(argv)
    db = args.db or gemmtune.default_db()
    start = time.perf_counter()
    try:
        page = build(db, gpu=args.gpu, device=args.device, calibration=args.calibration,
                     convergence=args.convergence, profiled=args.profiled)
    except ValueError as e:
        print(f"gemmtune report: error: {e}", file=sys.stderr)
        return 2
    with open(args.output, "w", encoding="utf-8") as out:
        out.write(page)
    print(f"wrote {args.output} in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
