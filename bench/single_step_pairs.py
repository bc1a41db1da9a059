#!/usr/bin/env python3
"""Which parameters the model orders worst, one step at a time: from `model_accuracy --dump OUT.csv
--calibration FILE` (every recorded configuration beside its calibrated prediction, compiled
registers), every pair of one problem's configurations that differ in exactly one parameter, per
parameter: how many, how many differ by more than 3% when measured, the share of those whose
predicted ratio has the measured one's sign, the correlation of the two log ratios, their mean
absolute difference and the measured log ratios' spread.

    python3 bench/single_step_pairs.py OUT.csv
"""
import collections
import csv
import itertools
import sys

import numpy as np

PARAMETERS = ("BM BN BK DX DY DXA DYA DXB DYB VA VB LA LB PD PF ST UR RS VS ED MM AC SK VC "
              "SL").split()


def main(path):
    by_problem = collections.defaultdict(list)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            measured, predicted = float(row["measured_s"]), float(row["calibrated_s"])
            if measured > 0 and 0 < predicted < 1e30:
                by_problem[row["problem"]].append(row)
    pairs = collections.defaultdict(lambda: ([], []))
    for rows in by_problem.values():
        for parameter in PARAMETERS:
            rest = [p for p in PARAMETERS if p != parameter]
            alike = collections.defaultdict(list)
            for row in rows:
                alike[tuple(row[p] for p in rest)].append(row)
            for group in alike.values():
                for a, b in itertools.combinations(group, 2):
                    if a[parameter] == b[parameter]:
                        continue
                    pairs[parameter][0].append(np.log(float(a["measured_s"]) /
                                                      float(b["measured_s"])))
                    pairs[parameter][1].append(np.log(float(a["calibrated_s"]) /
                                                      float(b["calibrated_s"])))
    print(f"{'param':6s} {'pairs':>6s} {'>3%':>6s} {'sign':>6s} {'corr':>6s} {'|err|':>6s} "
          f"{'spread':>6s}")
    for parameter in PARAMETERS:
        measured, predicted = map(np.array, pairs[parameter])
        if len(measured) < 20:
            continue
        apart = np.abs(measured) > 0.03
        sign = (np.sign(measured[apart]) == np.sign(predicted[apart])).mean() if apart.any() \
            else float("nan")
        corr = np.corrcoef(measured, predicted)[0, 1] \
            if measured.std() > 0 and predicted.std() > 0 else float("nan")
        print(f"{parameter:6s} {len(measured):6d} {apart.sum():6d} {sign:6.3f} {corr:6.2f} "
              f"{np.abs(measured - predicted).mean():6.3f} {measured.std():6.3f}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
