"""Wall time of a fixed `bat compare` campaign with 1 and 2 workers, and the scaling ratio.

Campaign: 5 tuners (reference:random, reference:genetic, reference:nelder_mead,
reference:shrinking_sample, kernel_tuner:genetic_algorithm) x 3 datasets
(gemm, convolution, pnpoly on RTX_3090, replayed) x 3 budgets (25, 50, 100)
x 30 repeats. One worker runs in this process (no pool: the cheapest way to
run serially, so the ratio is not flattered); two workers are a process pool.
Each timing starts from an empty output folder and includes loading the
datasets, running, and storing every run. Target: ratio >= 1.8 on 2 cores.

Usage: .venv/bin/python bench/compare_bench.py [--repeats 30] [--workers 1,2]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import tempfile
import time

from bat.campaign.design import Campaign, TunerSpec
from bat.campaign.execute import run_campaign

TUNERS = ("reference:random", "reference:genetic", "reference:nelder_mead", "reference:shrinking_sample",
          "kernel_tuner:genetic_algorithm")
TARGETS = (("gemm", "RTX_3090"), ("convolution", "RTX_3090"), ("pnpoly", "RTX_3090"))
BUDGETS = (25, 50, 100)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--workers", default="1,2")
    args = ap.parse_args()
    campaign = Campaign(tuners=tuple(TunerSpec.parse(t) for t in TUNERS), targets=TARGETS, budgets=BUDGETS,
                        repeats=args.repeats)
    walls = {}
    for w in (int(x) for x in args.workers.split(",")):
        load = os.getloadavg()[0]
        with tempfile.TemporaryDirectory() as out:
            start = time.perf_counter()
            done = run_campaign(campaign, out, workers=w)
            walls[w] = time.perf_counter() - start
        print(f"{w} worker(s): {walls[w]:.1f} s for {done.executed} runs (load average before: {load:.2f})",
              flush=True)
    report = {
        "campaign": f"{len(TUNERS)} tuners x {len(TARGETS)} datasets x {len(BUDGETS)} budgets x "
                    f"{args.repeats} repeats = {len(campaign.runs())} runs",
        "wall_s": walls,
        "machine": f"{os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}",
        "date": datetime.date.today().isoformat(),
    }
    if 1 in walls and 2 in walls:
        report["ratio_1_over_2"] = walls[1] / walls[2]
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
