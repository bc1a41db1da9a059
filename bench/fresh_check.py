#!/usr/bin/env python3
"""Summary of scripts/device-fresh-check: per problem, the model's zero-run pick, the best of a
tune of a few evaluations and the best of a timed tune, each measured in one run beside cuBLAS;
then the median, geometric mean and worst of the pick's and the short tune's fraction of the timed
tune's best (measured time of the timed tune's best / measured time of the other), and how many
fall below 0.80 (the model-fidelity issue's floor for the pick). Where no tune ran, the reference
is the fastest configuration measured in the run. With --markdown, the same as the table
bench/RESULTS.md keeps (every problem needs its timed tune), the other roles as columns.

    python3 bench/fresh_check.py [--markdown] CHECK.json...
"""
import json
import statistics
import sys

# The roles every check has: the model's zero-run pick and the two tunes' bests.
FIXED = ("pick", "tune_seconds", "tune_evaluations")


def row(path):
    m = json.load(open(path))
    by_role = {}
    for role, r in zip(m["roles"], m["results"]):
        by_role[role] = r["measured_us"] if r["status"] == "ok" else float("inf")
    return m, by_role


def over(x, times):
    """x / each role's time: cuBLAS's time gives the speed over cuBLAS, the reference's the
    fraction of it; 0 for a role that failed (its time infinite)."""
    return {role: x / v if 0 < v < float("inf") else 0.0 for role, v in times.items()}


def figures(fractions):
    """Median, geometric mean (0 if any fraction is), worst and count below 0.80."""
    positive = [f for f in fractions if f > 0]
    mean = statistics.geometric_mean(positive) if len(positive) == len(fractions) else 0.0
    return (statistics.median(fractions), mean, min(fractions),
            sum(f < 0.80 for f in fractions))


def summary(fractions):
    """The figures of a list of fractions, as the summary lines print them."""
    median, mean, worst, below = figures(fractions)
    return (f"median {median:.3f}, geometric mean {mean:.3f}, worst {worst:.3f}, "
            f"{below} below 0.80")


def main(paths):
    picks, shorts = [], []
    others = {}  # the other roles (FRESH_EXTRA's, say): each one's fraction of the reference
    print(f"{'problem':40} {'cuBLAS us':>10} {'pick x':>7} {'evals x':>7} {'tune x':>7}"
          f" {'pick/ref':>9} {'evals/ref':>10} {'tuned':>6}")
    untuned = 0
    for path in paths:
        m, t = row(path)
        cublas = m["cublas_us"]
        # The reference: the timed tune's best; without a tune (EVALS and SECONDS of 0), the
        # fastest of the configurations measured in the run.
        if "tune_seconds" in t:
            ref = t["tune_seconds"]
        else:
            ref = min((v for v in t.values() if v < float("inf")), default=None)
            untuned += 1
            if ref is None:
                print(f"{m['problem']:40} nothing measured ran: left out")
                continue
        ratio, fraction = over(cublas, t), over(ref, t)
        pick = fraction.get("pick", 0.0)
        short = fraction.get("tune_evaluations", 0.0)
        for role in t:
            if role not in FIXED:
                others.setdefault(role, []).append((m["problem"], fraction[role]))
        if "pick" in t:
            picks.append(pick)
        if short:
            shorts.append(short)
        print(f"{m['problem']:40} {cublas:10.2f} {ratio.get('pick', 0):7.3f}"
              f" {ratio.get('tune_evaluations', 0):7.3f} {ratio.get('tune_seconds', 0):7.3f}"
              f" {pick:9.3f} {short:10.3f} {m['tune_attempts']:6d}")
    reference = ("the timed tune's best" if untuned == 0 else
                 "the best measured in the run" if untuned == len(paths) else
                 "the timed tune's best, or the best measured where no tune ran")
    if picks:
        print(f"{len(picks)} problems: zero-run pick / {reference}: {summary(picks)}")
    if shorts:
        print(f"{len(shorts)} problems: best of the short tune / {reference}: {summary(shorts)}")
    for role, rows in others.items():
        for problem, fraction in rows:
            print(f"{role}: {problem:40} {fraction:.3f} of the reference")
        print(f"{len(rows)} problems: {role} / {reference}: {summary([f for _, f in rows])}")


def label(options):
    """A problem as the results file names it: "Z TN 177x1969x35, ld 1001/12073/5415, beta 1"."""
    words = options.split()
    o = dict(zip(words[::2], words[1::2]))
    text = (f"{o['--precision'].upper()} {o.get('--opa', 'n').upper()}{o.get('--opb', 'n').upper()} "
            f"{o['--m']}x{o['--n']}x{o['--k']}")
    if "--lda" in o:
        text += f", ld {o['--lda']}/{o['--ldb']}/{o['--ldc']}"
    if float(o.get("--beta", 0)) != 0:
        text += f", beta {o['--beta']}"
    if int(o.get("--batch", 1)) > 1:
        text += f", batch {o['--batch']}"
    return text


def markdown(paths):
    """The results file's table: per problem cuBLAS's time, the pick's, the short tune's and the
    timed tune's speed over cuBLAS, their fractions of the timed tune's best and each other role's
    fraction; then each fraction's median (worst), geometric mean and count below 0.80."""
    checks = [row(path) for path in paths]
    extra = []
    for path, (m, t) in zip(paths, checks):
        if "tune_seconds" not in t:
            raise SystemExit(f"{path}: no timed tune, so no reference for the table")
        extra += [r for r in m["roles"] if r not in FIXED and r not in extra]
    header = ["problem", "cuBLAS us", "pick x", "5 evaluations x", "60 s tune x", "pick / 60 s",
              "5 evaluations / 60 s", "attempts in 60 s"] + extra
    lines = ["| " + " | ".join(header) + " |",
             "| --- |" + " ---: |" * (len(header) - 1)]
    columns = {role: [] for role in ["pick", "tune_evaluations"] + extra}
    for m, t in checks:
        cublas = m["cublas_us"]
        speed, fraction = over(cublas, t), over(t["tune_seconds"], t)
        for role in columns:
            columns[role].append(fraction.get(role, 0.0))
        cublas_text = f"{cublas:,.2f}" if cublas < 1000 else f"{cublas:,.0f}"
        cells = [label(m["options"]), cublas_text] + \
            [f"{speed.get(r, 0.0):.3f}" for r in ("pick", "tune_evaluations", "tune_seconds")] + \
            [f"{fraction.get(r, 0.0):.3f}" for r in ("pick", "tune_evaluations")] + \
            [f"{m['tune_attempts']:,}"] + [f"{fraction.get(r, 0.0):.3f}" for r in extra]
        lines.append("| " + " | ".join(cells) + " |")
    blank = ["", "", "", ""]
    order = ["pick", "tune_evaluations"]

    def cells(fmt):
        return [fmt(columns[r]) for r in order] + [""] + [fmt(columns[r]) for r in extra]
    lines.append("| " + " | ".join(["**median (worst)**"] + blank + cells(
        lambda v: "**%.3f (%.3f)**" % (figures(v)[0], figures(v)[2]))) + " |")
    lines.append("| " + " | ".join(["geometric mean"] + blank + cells(
        lambda v: f"{figures(v)[1]:.3f}")) + " |")
    lines.append("| " + " | ".join(["below 0.80"] + blank + cells(
        lambda v: str(figures(v)[3]))) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--markdown"]:
        print(markdown(sys.argv[2:]))
    else:
        main(sys.argv[1:])
