"""Convergence plots: one PNG per tuner, one panel per target (matplotlib, Agg backend).

Each panel shows, against the number of charged evaluations k, the median
and interquartile band over the repeats of best known / best so far (from
the traces of the runs at the campaign's largest budget) and the exact
expectation of random search (dashed).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from analysis.compare.assess import random_times
from analysis.compare.campaign import Campaign
from analysis.compare.store import RunRecord


def convergence_plots(campaign: Campaign, records: list[RunRecord], out: Path) -> list[Path]:
    """Write ``convergence_<tuner>.png`` files into ``out``; return their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from analysis.convergence import expected_random_relative_performance, trace_relative_performance

    top = max(campaign.budgets)
    ks = np.unique(np.geomspace(1, top, 40).round().astype(int)).tolist()
    expected = {}
    for bench, gpu in campaign.targets:
        times = random_times(bench, gpu, campaign.backend, campaign.dataset_for(bench, gpu))
        if times is not None:
            expected[(bench, gpu)] = expected_random_relative_performance(times, [min(k, len(times)) for k in ks])
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    n = len(campaign.targets)
    cols = min(3, n)
    rows = math.ceil(n / cols)
    for t in campaign.tuners:
        fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
        for ax, (bench, gpu) in zip(axes.flat, campaign.targets, strict=False):
            mine = [r for r in records if r.meta["label"] == t.label and r.meta["benchmark"] == bench
                    and r.meta["gpu"] == gpu and max(r.meta["budgets"]) == top]
            if mine:
                best = float(mine[0].meta["best_known_ms"])
                rel = trace_relative_performance([r.trace for r in mine], best, ks)
                lo, mid, hi = np.nanquantile(rel, [0.25, 0.5, 0.75], axis=0)
                ax.fill_between(ks, lo, hi, alpha=0.3, label="IQR")
                ax.plot(ks, mid, label=f"{t.label} (median of {len(mine)})")
            if (bench, gpu) in expected:
                ax.plot(ks, expected[(bench, gpu)], "k--", label="random search (exact)")
            ax.set(xscale="log", ylim=(0, 1.02), title=f"{bench} / {gpu}", xlabel="evaluations",
                   ylabel="best known / best found")
            ax.legend(fontsize="small", loc="lower right")
        for ax in list(axes.flat)[n:]:
            ax.set_visible(False)
        fig.tight_layout()
        path = out / f"convergence_{re.sub(r'[^A-Za-z0-9_.-]', '_', t.label)}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        paths.append(path)
    return paths
