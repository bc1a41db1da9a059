#!/usr/bin/env python3
"""Held-out figures from `model_accuracy --learned ... --held-out OUT.csv`, per setting, for the
problems whose key matches a pattern: the pick (best measured / measured of the setting's top 1),
its 10th percentile, the best of the top 5, Spearman, and the picks' geometric mean. With
--bags, also the mean of every setting's log prediction, plus 0.5-3 standard deviations of them
(a pick that avoids configurations the fits disagree on). With --shortlist, per setting the best
of the first 5 that `tune --evaluations 5` measures (model/model.hpp's shortlist_order) for each
lead from 0 to 5: the model's first LEAD as ranked, then one configuration per tile family
(BM, BN, BK, DX, DY) not among them.

    python3 bench/held_out_figures.py OUT.csv ['H100-SXM:[sdcz]'] [--bags] [--shortlist]
"""
import collections
import csv
import math
import re
import sys

import numpy as np


def ranks(values):
    """Ranks from 0, ties sharing their mean rank (as Spearman's coefficient takes them)."""
    values = np.asarray(values)
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    return (first + (counts - 1) / 2.0)[inverse]


def figures(problems, measured, score):
    picks, top5, spearman = [], [], []
    for keys in problems.values():
        m = np.array([measured[k] for k in keys])
        s = np.array([score(k) for k in keys])
        order = np.argsort(s, kind="stable")
        best = m.min()
        picks.append(best / m[order[0]])
        top5.append(best / m[order[:5]].min())
        spearman.append(np.corrcoef(ranks(s), ranks(m))[0, 1])
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


def main(argv):
    args = [a for a in argv if a not in ("--bags", "--shortlist")]
    if not args:
        sys.exit(__doc__)
    pattern = re.compile(args[1] if len(args) > 1 else "H100-SXM:")
    predicted = collections.defaultdict(dict)  # (problem, config) -> {setting: log predicted}
    measured = {}
    with open(args[0]) as f:
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
    print("%-24s %6s %6s %6s %6s %8s %6s" % ("ranked by", "pick", "p10", "top5", "t5p10",
                                            "Spearman", "geo"))
    rows = [(f"setting {s}", lambda k, s=s: predicted[k][s]) for s in settings]
    if "--bags" in argv:
        for kappa in (0, 0.5, 1, 2, 3):
            rows.append((f"mean + {kappa} sd", lambda k, kappa=kappa: np.mean(
                list(predicted[k].values())) + kappa * np.std(list(predicted[k].values()))))
    for name, score in rows:
        print("%-24s %6.3f %6.3f %6.3f %6.3f %8.3f %6.3f" % ((name,) +
                                                            figures(problems, measured, score)))
    if "--shortlist" in argv:
        print("%-24s %6s %6s %6s" % ("first 5 of the shortlist", "median", "p10", "geo"))
        for s in settings:
            for lead in range(6):
                print("%-24s %6.3f %6.3f %6.3f" % ((f"setting {s}, lead {lead}",) + shortlist_figures(
                    problems, measured, lambda k, s=s: predicted[k][s], lead)))


if __name__ == "__main__":
    main(sys.argv[1:])
