"""Hypertune targets of issue 30: the held-out comparison per tuner, and the time of one hypertune on 2 workers
against the same on a Dask LocalCluster(2).

    python bench/hypertune_bench.py time OUT      # one hypertune, local pool (2) then Dask LocalCluster(2)
    python bench/hypertune_bench.py heldout OUT TUNER [SETTINGS [SPLIT]]   # the held-out comparison of one tuner

Pool: pnpoly, convolution and gemm recorded on RTX_3090, RTX_2080_Ti and RTX_Titan. Split: leave-GPUs-out
with RTX_Titan held out (training: 6 datasets, held out: 3), or SPLIT (e.g. benchmarks:gemm, leave-benchmarks-
out). Search: random, 3 runs per training dataset at budget 50; final comparison: 10 fresh runs per dataset.
Each line printed is JSON.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from bat.analysis.hypertune.driver import Plan, hypertune, plan
from bat.analysis.hypertune.splits import make_split

POOL = [f"{b}_{g}" for b in ("pnpoly", "convolution", "gemm") for g in ("RTX_3090", "RTX_2080_Ti", "RTX_Titan")]
SPLIT = "gpus:RTX_Titan"
TIMED = {"tuner": "kernel_tuner:genetic_algorithm", "settings": 30, "budget": 50, "repeats": 3, "final_repeats": 10}


def _plan(tuner: str, settings: int, budget: int, repeats: int, final_repeats: int, split: str = SPLIT) -> Plan:
    return plan(tuner=tuner, split=make_split(pool=POOL, split=split), settings=settings, budget=budget,
                repeats=repeats, final_repeats=final_repeats, searcher="random")


def timed(out: Path) -> None:
    p = _plan(**TIMED)
    start = time.perf_counter()
    pool = hypertune(p, out / "pool", workers=2, report=False)
    pool_s = time.perf_counter() - start
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster):
        start = time.perf_counter()
        dask = hypertune(p, out / "dask", scheduler=cluster.scheduler_address, report=False)
        dask_s = time.perf_counter() - start
    same = pool.best == dask.best and [t["score"] for t in pool.tried] == [t["score"] for t in dask.tried]
    print(json.dumps({"what": "time", **TIMED, "train": len(p.split.train), "settings_tried": len(pool.tried),
                      "pool_2_workers_s": round(pool_s, 1), "dask_localcluster_2_s": round(dask_s, 1),
                      "ratio_dask_over_pool": round(dask_s / pool_s, 3), "same_results": same,
                      "load_before": os.getloadavg()}))


def heldout(out: Path, tuner: str, settings: int, split: str = SPLIT) -> None:
    p = _plan(tuner, settings, 50, 3, 10, split)
    start = time.perf_counter()
    name = tuner.replace(":", "_") + ("" if split == SPLIT else "_" + split.replace(":", "_").replace(",", "_"))
    o = hypertune(p, out / name, workers=2)
    f = o.final
    print(json.dumps({"what": "heldout", "tuner": tuner, "split": p.split.how, "settings_tried": len(o.tried),
                      "best": o.best,
                      "train": {k: f["train"][k]["score"] for k in ("best", "defaults")},
                      "train_improvement": f["train"]["improvement"],
                      "heldout": {k: f["heldout"][k]["score"] for k in ("best", "defaults")},
                      "heldout_improvement": f["heldout"]["improvement"], "gap": f["generalisation_gap"],
                      "wall_s": round(time.perf_counter() - start, 1)}, default=str))


if __name__ == "__main__":
    if sys.argv[1] == "time":
        timed(Path(sys.argv[2]))
    else:
        heldout(Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 30,
                sys.argv[5] if len(sys.argv) > 5 else SPLIT)
