#!/usr/bin/env python3
"""Summary of scripts/device-compare-builds: per problem, each configuration's median time over
the rounds with the old build and with the new one, old / new (above 1: the new build faster),
its range over the problem's configurations, how many the new build runs faster (by more than
1%), and the best configuration's time with each build; then the geometric mean of old / new over
every configuration both builds ran right. A configuration that failed, was wrong or is missing
from a round with either build is named and left out of the ratios; a round of a build that left
no JSON (the script's LINE_BUILD_ROUND.failed) is named too.

    python3 bench/compare_builds.py COMPARE_DIR/*.json
"""
import json
import os
import re
import statistics
import sys

NAME = re.compile(r"(\d+)_(old|new)_(\d+)\.json$")


def read(paths):
    """{line: {"problem": id, "old"|"new": {config: [us, ...] or None if any run failed},
    "rounds": {"old"|"new": {round, ...}}}}."""
    lines = {}
    for path in paths:
        m = NAME.search(os.path.basename(path))
        if not m:
            raise SystemExit(f"{path}: not a LINE_BUILD_ROUND.json of device-compare-builds")
        try:
            data = json.load(open(path))
        except (OSError, ValueError) as e:
            raise SystemExit(f"{path}: not a measure --format json result ({e})")
        entry = lines.setdefault(int(m.group(1)), {"problem": data["problem"], "old": {},
                                                   "new": {}, "rounds": {"old": set(),
                                                                         "new": set()}})
        entry["rounds"][m.group(2)].add(int(m.group(3)))
        if entry["problem"] != data["problem"]:
            raise SystemExit(f"{path}: problem {data['problem']} where line "
                             f"{int(m.group(1))} holds {entry['problem']}")
        times = entry[m.group(2)]
        for r in data["results"]:
            ok = r["status"] == "ok"
            if ok and times.get(r["config"], []) is not None:
                times.setdefault(r["config"], []).append(r["measured_us"])
            else:
                times[r["config"]] = None
    return lines


def summary(lines):
    rows, ratios, failed, missing = [], [], [], []
    for line in sorted(lines):
        e = lines[line]
        last = max(max(r, default=0) for r in e["rounds"].values())
        for build in ("old", "new"):
            absent = sorted(set(range(1, last + 1)) - e["rounds"][build])
            if absent:
                missing.append((e["problem"], build, absent))
        medians = {}
        for config in sorted(set(e["old"]) | set(e["new"])):
            o, n = e["old"].get(config), e["new"].get(config)
            if (not o or not n or len(o) < len(e["rounds"]["old"])
                    or len(n) < len(e["rounds"]["new"])):
                failed.append((e["problem"], config))
                continue
            medians[config] = (statistics.median(o), statistics.median(n))
        if not medians:
            continue
        r = [o / n for o, n in medians.values()]
        ratios += r
        best_old = min(o for o, _ in medians.values())
        best_new = min(n for _, n in medians.values())
        rows.append((e["problem"], min(r), max(r), sum(x > 1.01 for x in r), len(r), best_old,
                     best_new))
    return rows, ratios, failed, missing


def main(argv):
    if not argv:
        raise SystemExit(__doc__.strip().splitlines()[-1].strip())
    rows, ratios, failed, missing = summary(read(argv))
    print("| problem | old / new, range | new faster on | best, old -> new us |")
    print("| --- | ---: | ---: | ---: |")
    for problem, lo, hi, faster, n, bo, bn in rows:
        print(f"| {problem} | {lo:.3f}-{hi:.3f} | {faster} of {n} | {bo:.1f} -> {bn:.1f} |")
    if ratios:
        print(f"\ngeometric mean old / new over {len(ratios)} configurations: "
              f"{statistics.geometric_mean(ratios):.3f}")
    for problem, config in failed:
        print(f"failed, wrong or missing with a build, left out: {problem} {config}")
    for problem, build, rounds in missing:
        print(f"no result of the {build} build in round {', '.join(map(str, rounds))}: {problem}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
