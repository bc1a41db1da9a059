#!/usr/bin/env python3
"""Held-out figures from `model_accuracy --learned ... --held-out OUT.csv`, per setting, for the
problems whose key matches a pattern: the pick (best measured / measured of the setting's top 1),
its 10th percentile, the best of the top 5, Spearman, and the picks' geometric mean. With
--bags, also the mean of every setting's log prediction, plus 0.5-3 standard deviations of them
(a pick that avoids configurations the fits disagree on). With --shortlist, per setting the best
of the first 5 that `tune --evaluations 5` measures (model/model.hpp's shortlist_order) for each
lead from 0 to 5: the model's first LEAD as ranked, then one configuration per tile family
(BM, BN, BK, DX, DY) not among them. With --domain NAME, the figures again over only the
configurations that `gemmtune space --domain NAME` keeps (the only ones `predict` ranks), each
against the best of the whole recording (what a tune's refinement found), beside that space's
ceiling (its best kept over the best recorded).

    python3 bench/held_out_figures.py OUT.csv ['H100-SXM:[sdcz]'] [--bags] [--shortlist]
        [--domain full [--gemmtune build/gemmtune]]
"""
import argparse
import collections
import csv
import math
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from domain_cap import places, problem_options  # noqa: E402

# model/quality.cpp's sample_key: GPU:p_ab_MxNxK_bBATCH[_ldAxBxC][_betaR]
KEY = re.compile(r"(?P<gpu>[^:]+):(?P<p>[a-z])_(?P<a>[a-z])(?P<b>[a-z])_(?P<m>\d+)x(?P<n>\d+)"
                 r"x(?P<k>\d+)_b(?P<batch>\d+)(?:_ld(?P<lda>\d+)x(?P<ldb>\d+)x(?P<ldc>\d+))?"
                 r"(?:_beta(?P<beta>[-+.0-9e]+))?$")


def ranks(values):
    """Ranks from 0, ties sharing their mean rank (as Spearman's coefficient takes them)."""
    values = np.asarray(values)
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    return (first + (counts - 1) / 2.0)[inverse]


def space_options(problem):
    """`gemmtune space` options of a held-out problem's key."""
    match = KEY.match(problem)
    if not match:
        raise SystemExit(f"cannot read the problem key '{problem}' (expected {KEY.pattern})")
    g = match.groupdict()
    # A key leaves out packed leading dimensions and beta 0; the CLI reads 0 as packed.
    return problem_options((g["gpu"], g["p"], g["a"], g["b"], g["m"], g["n"], g["k"],
                            g["lda"] or "0", g["ldb"] or "0", g["ldc"] or "0", g["batch"],
                            g["beta"] or "0"))


def figures(problems, measured, score, best_of=None):
    """Pick, its p10, top 5, its p10, Spearman and the picks' geometric mean; each problem's best
    is best_of[problem] where given, else the best among its keys."""
    picks, top5, spearman = [], [], []
    for problem, keys in problems.items():
        m = np.array([measured[k] for k in keys])
        s = np.array([score(k) for k in keys])
        order = np.argsort(s, kind="stable")
        best = best_of[problem] if best_of else m.min()
        picks.append(best / m[order[0]])
        top5.append(best / m[order[:5]].min())
        spearman.append(np.corrcoef(ranks(s), ranks(m))[0, 1] if len(keys) > 1 else 1.0)
    return (np.median(picks), np.percentile(picks, 10), np.median(top5), np.percentile(top5, 10),
            np.median(spearman), math.exp(np.mean(np.log(picks))))


def shortlist_first5(configs, lead):
    """Indices of the first 5 of shortlist_order over configs (sorted by prediction)."""
    families, firsts, others = set(), [], []
    for i, config in enumerate(configs):
        family = tuple(config.split("_")[:5])
        new = family not in families
        families.add(family)
        (firsts if new or i < lead else others).append(i)
    return (firsts + others)[:5]


def shortlist_figures(problems, measured, score, lead):
    fractions = []
    for keys in problems.values():
        ordered = sorted(keys, key=score)
        first5 = shortlist_first5([k[1] for k in ordered], lead)
        fractions.append(min(measured[k] for k in keys) / min(measured[ordered[i]] for i in first5))
    return np.median(fractions), np.percentile(fractions, 10), math.exp(np.mean(np.log(fractions)))


def print_figures(rows, problems, measured, best_of=None):
    print("%-24s %6s %6s %6s %6s %8s %6s" % ("ranked by", "pick", "p10", "top5", "t5p10",
                                            "Spearman", "geo"))
    for name, score in rows:
        print("%-24s %6.3f %6.3f %6.3f %6.3f %8.3f %6.3f" % (
            (name,) + figures(problems, measured, score, best_of)))


def in_domain(problems, measured, gemmtune, domain):
    """The problems' keys the space keeps, and each such problem's best recorded at all."""
    kept, best_of, empty = {}, {}, 0
    for problem, keys in problems.items():
        where = places(gemmtune, domain, space_options(problem), [k[1] for k in keys])
        inside = [k for k in keys if where[k[1]]["kept"]]
        if not inside:
            empty += 1
            continue
        kept[problem] = inside
        best_of[problem] = min(measured[k] for k in keys)
    return kept, best_of, empty


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("held_out")
    parser.add_argument("pattern", nargs="?", default="H100-SXM:")
    parser.add_argument("--bags", action="store_true")
    parser.add_argument("--shortlist", action="store_true")
    parser.add_argument("--domain")
    parser.add_argument("--gemmtune", default="build/gemmtune")
    args = parser.parse_args(argv)
    pattern = re.compile(args.pattern)
    predicted = collections.defaultdict(dict)  # (problem, config) -> {setting: log predicted}
    measured = {}
    with open(args.held_out) as f:
        for row in csv.DictReader(f):
            key = (row["problem"], row["config"])
            predicted[key][int(row["setting"])] = math.log(float(row["predicted_s"]))
            measured[key] = float(row["measured_s"])
    problems = collections.defaultdict(list)
    for key in predicted:
        if pattern.match(key[0]):
            problems[key[0]].append(key)
    settings = sorted({s for v in predicted.values() for s in v})
    print(f"{len(problems)} problems matching {pattern.pattern}")
    rows = [(f"setting {s}", lambda k, s=s: predicted[k][s]) for s in settings]
    if args.bags:
        for kappa in (0, 0.5, 1, 2, 3):
            rows.append((f"mean + {kappa} sd", lambda k, kappa=kappa: np.mean(
                list(predicted[k].values())) + kappa * np.std(list(predicted[k].values()))))
    print_figures(rows, problems, measured)
    if args.domain:
        kept, best_of, empty = in_domain(problems, measured, args.gemmtune, args.domain)
        ceiling = [best_of[p] / min(measured[k] for k in kept[p]) for p in kept]
        print(f"only the configurations the {args.domain} domain keeps, against the whole "
              f"recording's best: {len(kept)} problems ({empty} with none kept left out); the "
              f"space's ceiling median {np.median(ceiling):.3f}, p10 "
              f"{np.percentile(ceiling, 10):.3f}")
        print_figures(rows, kept, measured, best_of)
    if args.shortlist:
        print("%-24s %6s %6s %6s" % ("first 5 of the shortlist", "median", "p10", "geo"))
        for s in settings:
            for lead in range(6):
                print("%-24s %6.3f %6.3f %6.3f" % ((f"setting {s}, lead {lead}",) + shortlist_figures(
                    problems, measured, lambda k, s=s: predicted[k][s], lead)))


if __name__ == "__main__":
    main(sys.argv[1:])
