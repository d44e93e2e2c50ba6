"""What a comparison's analysis needs no run for, done in the driver while its workers run.

With worker processes or a Dask cluster the driver only stores runs as they
arrive; the statistics and figures after the last run used to start from
nothing, on one core, while the workers sat idle. ``warm_up`` is the
``alongside`` work of ``run_campaign`` (a thread of the driver, during the
runs): the part of that work that depends on
the datasets only: importing SciPy's statistics and matplotlib, loading each
target, its random-search expectation and quantiles and the per-target parts
of the methodology view (``methodology.target_parts``: baseline, noise-aware
optimum, data checks, orderings, the row index, random search's expected
best at each evaluation). The analysis then finds
them in the caches those functions keep; the values are the same ones,
computed the same way, only earlier. A failure here is left for the analysis
to raise where it always did (``run_campaign`` drops it).
"""

from __future__ import annotations

import numpy as np

from bat.campaign.design import Campaign


def warm_up(campaign: Campaign, *, plots: bool = True) -> None:
    """Compute what the analysis and figures of ``campaign`` need from its datasets alone."""
    import scipy.stats  # noqa: F401  (the tests' import, the longest single step of the analysis)

    from bat.analysis.compare.assess import random_baseline
    from bat.analysis.compare.methodology import target_parts

    random_baseline(campaign)
    if campaign.backend == "replay":
        for bench, gpu in campaign.targets:
            parts = target_parts(campaign, bench, gpu)
            if parts is not None:  # random search's expected best at each evaluation, as score_runs asks
                base, top = parts[1], parts[4]
                base.evals(np.arange(1, min(top, len(base.values)) + 1))
    if plots:
        from bat.analysis.compare.plots import random_bands
        from bat.analysis.plots import pyplot

        pyplot()
        random_bands(campaign)
