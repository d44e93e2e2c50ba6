"""BAT's public API: what a notebook or a script uses; every other module is private by convention.

Load a benchmark and its space, build a target (a recorded dataset replayed,
or the GPU) and a Problem, run a tuner (the trace is a pandas DataFrame),
load datasets, run the analyses and draw their figures (functions returning
``matplotlib.figure.Figure``)::

    import bat

    target = bat.replay_target("gemm", "RTX_3090")
    run = bat.run_tuner("optuna", target, budget=bat.Budget(max_evals=50), seed=1)
    run.trace                       # one row per proposal
    bat.convergence_figure("gemm", [bat.trace_curve("optuna", [run.trace], target.best_known_ms, [10, 50])])

Names are imported on first use (PEP 562), so ``import bat`` and the ``bat``
command stay fast and pull in no tuning or analysis library.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    # benchmarks and spaces
    "load_benchmark": "bat.benchmark", "benchmark_names": "bat.benchmark", "Benchmark": "bat.benchmark",
    "ProblemSize": "bat.benchmark",
    "SearchSpace": "bat.space", "Parameter": "bat.space", "Constraint": "bat.space",
    # targets, problems, tuners, runs
    "Target": "bat.targets", "TargetRequest": "bat.targets", "make_target": "bat.targets",
    "replay_target": "bat.targets",
    "Problem": "bat.problem", "Budget": "bat.problem", "EvalResult": "bat.problem", "TargetFacts": "bat.problem",
    "Tuner": "bat.tuner", "ExpectedFailure": "bat.tuner",
    "make_tuner": "bat.registry", "tuner_names": "bat.registry",
    "run_tuner": "bat.driver", "RunResult": "bat.driver",
    "read_trace": "bat.trace",
    "check_tuner": "bat.testing",
    # datasets
    "Dataset": "bat.dataset", "Status": "bat.dataset",
    "load_dataset": "bat.registry", "find_dataset": "bat.registry", "dataset_entries": "bat.registry",
    "load_benchmark_data": "analysis.data", "ok_times": "analysis.data",
    # analyses
    "distribution": "analysis.distribution",
    "max_speedup_over_median": "analysis.speedup",
    "random_search_curve": "analysis.convergence", "trace_curve": "analysis.convergence",
    "dataset_centrality": "analysis.centrality",
    "permutation_importance": "analysis.importance",
    "portability_matrix": "analysis.portability",
    "check_dataset": "analysis.checks", "noise_set": "analysis.noise",
    "target_baseline": "analysis.score", "run_curve": "analysis.score", "score_runs": "analysis.score",
    # figures
    "distribution_figure": "analysis.plots", "speedup_figure": "analysis.plots",
    "convergence_figure": "analysis.plots", "centrality_figure": "analysis.plots",
    "importance_figure": "analysis.plots", "portability_figure": "analysis.plots",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'bat' has no attribute {name!r}; the public API is: {', '.join(__all__)}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
