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
    "load_benchmark": "bat.core.benchmark", "benchmark_names": "bat.core.benchmark", "Benchmark": "bat.core.benchmark",
    "ProblemSize": "bat.core.benchmark",
    "SearchSpace": "bat.core.space", "Parameter": "bat.core.space", "Constraint": "bat.core.space",
    # targets, problems, tuners, runs
    "Target": "bat.run.targets", "TargetRequest": "bat.run.targets", "make_target": "bat.run.targets",
    "replay_target": "bat.run.targets",
    "Problem": "bat.core.problem", "Budget": "bat.core.problem", "EvalResult": "bat.core.problem",
    "TargetFacts": "bat.core.facts",
    "Tuner": "bat.core.tuner", "ExpectedFailure": "bat.core.tuner",
    "make_tuner": "bat.registry", "tuner_names": "bat.registry",
    "run_tuner": "bat.run.driver", "RunResult": "bat.run.driver",
    "read_trace": "bat.core.trace",
    "check_tuner": "bat.testing",
    "compare": "bat.analysis.compare.outcome", "CompareResult": "bat.analysis.compare.outcome",
    # datasets
    "Dataset": "bat.core.dataset", "Status": "bat.core.dataset",
    "load_dataset": "bat.registry", "find_dataset": "bat.registry", "dataset_entries": "bat.registry",
    "load_benchmark_data": "bat.analysis.data", "ok_times": "bat.analysis.data",
    "benchmarks_with_data": "bat.analysis.data",
    # analyses
    "distribution": "bat.analysis.distribution",
    "max_speedup_over_median": "bat.analysis.speedup",
    "random_search_curve": "bat.analysis.convergence", "trace_curve": "bat.analysis.convergence",
    "expected_random_relative_performance": "bat.analysis.convergence",
    "sampled_random_relative_performance": "bat.analysis.convergence",
    "evaluations_to_reach": "bat.analysis.convergence",
    "dataset_centrality": "bat.analysis.centrality", "fitness_array": "bat.analysis.centrality",
    "FitnessFlowGraph": "bat.analysis.ffg", "reference_pagerank": "bat.analysis.ffg_reference",
    "permutation_importance": "bat.analysis.importance", "reduced_parameters": "bat.analysis.importance",
    "ModelSettings": "bat.analysis.model", "size_row": "bat.analysis.sizes",
    "portability_matrix": "bat.analysis.portability",
    "check_dataset": "bat.data.checks", "noise_set": "bat.analysis.noise",
    "target_baseline": "bat.analysis.score", "run_curve": "bat.analysis.score", "score_runs": "bat.analysis.score",
    # figures
    "distribution_figure": "bat.analysis.plots", "speedup_figure": "bat.analysis.plots",
    "convergence_figure": "bat.analysis.plots", "centrality_figure": "bat.analysis.plots",
    "importance_figure": "bat.analysis.plots", "portability_figure": "bat.analysis.plots",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name == "__version__":  # the installed distribution's version, read on first use
        from importlib.metadata import PackageNotFoundError, version

        try:
            globals()[name] = version("bat-autotune")
        except PackageNotFoundError:  # a source tree on the path, never installed
            globals()[name] = "0+unknown"
        return globals()[name]
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'bat' has no attribute {name!r}; the public API is: {', '.join(__all__)}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
