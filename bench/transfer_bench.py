"""The whole transfer study (issue 34): its wall time and the targets' figures.

Study: every benchmark with data of at least three GPUs on one space (gemm, convolution, pnpoly,
convolution_milo, dedispersion_milo), every GPU held out in turn with the other GPUs' data as the
prior, plus the cross-vendor splits (NVIDIA -> AMD and back on the two hub families), the tuners
of ``--tuners`` (default: the three reference transfer tuners and random search), ``--repeats``
seeds, one budget. It runs from an empty folder (or resumes ``--out``) on ``--workers`` local
processes, exactly as ``bat compare --study transfer`` does.

Figures (targets of the issue):

1. per family, the mean over held-out GPUs (split "all other GPUs") of each transfer tuner's median
   evaluations to 1.10 x the target's optimum (censored runs count as budget + 1); the best
   transfer tuner is the one that meets "median <= 5" on the most families (ties: the lowest mean
   over families). Target: <= 5 on at least 3 of the 5 families.
2. for that tuner, on every target of every split, its median evaluations to 1.10 against random
   search's exact median (without replacement, not censored): target, never more than 1.10 x it.
   A censored median (> budget) that 1.10 x random's median exceeds is "undecided".

Usage: .venv/bin/python bench/transfer_bench.py [--workers 2] [--repeats 20] [--budget 50] [--out DIR]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

from bat.analysis.compare.transfer import ALL_OTHERS, DEFAULT_BUDGET, DEFAULT_TUNERS, plan_transfer, run_transfer
from bat.analysis.compare.transfer_report import write_outputs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tuners", default=",".join(DEFAULT_TUNERS))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--budget", type=int, default=DEFAULT_BUDGET)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    plan = plan_transfer(tuners=args.tuners.split(","), budget=args.budget, repeats=args.repeats)
    out = Path(args.out or tempfile.mkdtemp(prefix="transfer-bench-"))
    start = time.perf_counter()
    done, result = run_transfer(plan, out, workers=args.workers)
    run_s = time.perf_counter() - start
    write_outputs(out, result, done.records)
    total_s = time.perf_counter() - start
    budget = plan.budget
    rows = result.goal_rows(1.10)
    families = sorted({r["benchmark"] for r in rows})
    transfer = [t.label for t in plan.tuners if t.label != plan.floor]
    per_family = {label: {f: float(np.mean([r["median"] for r in rows if r["label"] == label and r["benchmark"] == f
                                            and r["split"] == ALL_OTHERS])) for f in families} for label in transfer}
    met = {label: sum(v <= 5 for v in fam.values()) for label, fam in per_family.items()}
    best = min(transfer, key=lambda lab: (-met[lab], np.mean(list(per_family[lab].values()))))
    worse, undecided, checked = [], [], 0
    for r in rows:
        if r["label"] != best or r["random_exact_median"] is None:
            continue
        checked += 1
        limit = 1.10 * r["random_exact_median"]
        if r["median"] > budget and limit >= r["median"]:
            undecided.append(r)
        elif r["median"] > limit:
            worse.append(r)
    report = {
        "date": datetime.date.today().isoformat(), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "load_before": round(load, 2), "load_after": round(os.getloadavg()[0], 2), "workers": args.workers,
        "repeats": args.repeats, "budget": budget, "tuners": [t.label for t in plan.tuners],
        "runs": len(done.records), "executed": done.executed, "reused": done.reused,
        "run_wall_s": round(run_s, 1), "total_wall_s": round(total_s, 1), "out": str(out),
        "mean_median_to_1.10_per_family": per_family, "families_at_most_5": met, "best": best,
        "target_1": f"{met[best]} of {len(families)} families <= 5 (target: >= 3)",
        "target_2": f"{len(worse)} of {checked} target-splits above 1.10 x random search's exact median, "
                    f"{len(undecided)} undecided (censored)",
        "worse": [{k: r[k] for k in ("split", "benchmark", "gpu", "median", "random_exact_median")} for r in worse],
        "undecided": [{k: r[k] for k in ("split", "benchmark", "gpu", "median", "random_exact_median")}
                      for r in undecided],
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
