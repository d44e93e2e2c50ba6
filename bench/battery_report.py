"""The tuner battery on every registered tuner: each check's outcome and the share of wasted proposals.

Prints a Markdown table, one row per tuner: pass / xfail (a declared expected
failure, raised as declared) / FAIL / not installed per check, and ``waste``, the share of
proposals rejected by the constraints or repeated over the battery's first
and fourth runs (``bat.testing.MAX_WASTE`` bounds it). These are counts of a
deterministic run, not timings.

Usage: ``python bench/battery_report.py [TUNER ...]`` (default: every registered tuner).
"""

from __future__ import annotations

import sys
import warnings
from functools import partial

from bat.registry import make_tuner, tuner_names
from bat.testing import CHECKS, MAX_WASTE, Battery, BatteryReport


def short(outcome: str) -> str:
    if outcome == "passed":
        return "pass"
    if outcome.startswith("MissingDependencyError"):
        return "not installed"
    return "xfail" if outcome.startswith("expected failure") else "FAIL"


def report(name: str) -> BatteryReport:
    options = {"announce": False} if name.startswith("profile") else {}
    return Battery(partial(make_tuner, name, **options)).report(name)


def main(names: list[str]) -> None:
    warnings.filterwarnings("ignore")
    rows = []
    for name in names:
        rep = report(name)
        waste = "-" if rep.waste is None else f"{rep.waste:.0%}"
        rows.append({"tuner": name, **{c: short(rep.outcomes[c]) for c in CHECKS}, "waste": waste})
        for check, outcome in rep.outcomes.items():
            if outcome != "passed":
                print(f"{name} {check}: {outcome[:200]}", file=sys.stderr)
    columns = list(rows[0])
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(row[c]) for c in columns) + " |")
    print(f"\nwaste bound: {MAX_WASTE:.0%}")


if __name__ == "__main__":
    main(sys.argv[1:] or tuner_names())
