"""``bat.compare``: the library form of ``bat compare``, its result under the names of ``bat compare --json``.

``compare(...)`` takes the command's options as keyword arguments (their
Python names: ``--cles-threshold`` is ``cles_threshold``), runs the same
campaign into ``out`` and returns a ``CompareResult`` whose fields are the
keys of the command's JSON document (``executed``, ``reused``, ``wall_s``,
``outputs``, ``data_flags``, ``scores``, ``run_warnings``, ``gate``); the command prints and
documents that same result.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, cast

from bat.analysis.compare.study import Comparison, plan_campaign
from bat.analysis.compare.study import compare as run_comparison


@dataclass(frozen=True)
class CompareResult:
    """What a comparison ran, wrote and found; each field is the key of the same name of ``--json``."""

    executed: int  # runs executed now
    reused: int  # finished runs found in OUT/runs.sqlite
    wall_s: float
    outputs: dict[str, str]  # output kind (summary, json, ...) -> file
    data_flags: list[dict[str, Any]]  # {"target", "messages"} per flagged target
    scores: dict[str, dict[str, Any]]  # tuner label -> {"score", "methodology_evaluations", "methodology_time"}
    #: runs whose tuner misbehaved: {"label", "benchmark", "gpu", "repeat", "warning", "processes_left"}
    run_warnings: list[dict[str, Any]]
    gate: dict[str, Any] | None  # with a baseline: {"baseline", "compared", "passed", "regressed"}
    comparison: Comparison = field(repr=False, compare=False)  # everything else (the analysis, the run records)

    @property
    def regressed(self) -> bool:
        """A baseline was given and the gate did not pass (``bat compare`` then exits with 3)."""
        return self.comparison.regressed

    def document(self) -> dict[str, Any]:
        """The fields as ``bat compare --json`` prints them (the command adds ``command``, ``ok``, ``exit_code``)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "comparison"}


def outcome(done: Comparison, oracle_labels: Collection[str] = ()) -> CompareResult:
    """The result of a finished comparison; oracles' scores come after the tuners'."""
    result = done.analysis
    m = result.methodology
    flags = [{"target": t.name, "messages": [f.message for f in t.check.flags]}
             for t in (m.targets if m is not None else []) if t.check.flagged]
    labels = [label for label in result.scores if label not in oracle_labels]
    labels += [label for label in result.scores if label in oracle_labels]
    scores: dict[str, dict[str, Any]] = {}
    for label in labels:
        scores[label] = {"score": result.scores[label]["overall"]}
        if m is not None:
            for axis in ("evaluations", "time"):
                a = m.aggregate(label, axis)
                scores[label][f"methodology_{axis}"] = {k: a[k] for k in ("score", "ci_low", "ci_high")}
    warned = [{"label": r.meta.get("label"), "benchmark": r.meta.get("benchmark"), "gpu": r.meta.get("gpu"),
               "repeat": r.meta.get("repeat"), "warning": str(r.meta["tuner_report"]["warning"]),
               "processes_left": r.meta["tuner_report"].get("processes_left", [])}
              for r in done.run.records if r.meta.get("tuner_report", {}).get("warning")]
    g = result.gate
    gate = None
    if g is not None:
        regressed = [] if g.regressed is None else [
            {"label": r.label, "benchmark": r.benchmark, "gpu": r.gpu, "budget": int(cast(int, r.budget)),
             "median": r.median, "median_baseline": r.median_baseline, "cles_better": r.cles_better, "p_holm": r.p_holm}
            for r in g.regressed.itertuples()]
        gate = {"baseline": str(done.baseline), "compared": list(done.compared),
                "passed": bool(done.compared) and g.passed, "regressed": regressed}
    return CompareResult(executed=done.run.executed, reused=done.run.reused, wall_s=done.run.wall_s,
                         outputs={k: str(v) for k, v in done.paths.items()}, data_flags=flags, scores=scores,
                         run_warnings=warned, gate=gate, comparison=done)


def compare(tuners: Sequence[str], *, benchmarks: Sequence[str] | None = None, datasets: Sequence[str] | None = None,
            gpus: Sequence[str] | None = None, budgets: Sequence[int] = (), repeats: int = 10, seed: int = 0,
            out: str | Path = "compare-out", baseline: str | Path | None = None, alpha: float = 0.05,
            cles_threshold: float = 0.4, success: str = "noise", noise: str = "none", backend: str = "replay",
            preset: str | None = None, remeasure: int | None = None, tuner_options: Sequence[str | Path] = (),
            oracles: bool = False, tuner_charge_s: float | None = None, isolate: bool = False,
            compile_workers: Sequence[int] = (1,), devices: int = 1, timeout_factor: float | None = None,
            workers: int = 1, scheduler: str | None = None, plots: bool = True,
            progress: Callable[[int, int], None] | None = None) -> CompareResult:
    """Compare ``tuners`` over repeated seeded runs, as ``bat compare`` does, writing into ``out``.

    ``benchmarks=None`` is every benchmark (``--benchmarks all``); ``budgets=()`` the default budgets.
    Finished runs in ``out`` are reused, as on the command line.
    """
    campaign = plan_campaign(tuners=list(tuners), benchmarks=list(benchmarks) if benchmarks else None,
                             datasets=list(datasets) if datasets else None, gpus=list(gpus) if gpus else None,
                             budgets=list(budgets), repeats=repeats, seed=seed, preset=preset, remeasure=remeasure,
                             backend=backend, noise=noise, tuner_options=[str(p) for p in tuner_options],
                             oracles=oracles, tuner_charge_s=tuner_charge_s, isolate=isolate,
                             compile_workers=list(compile_workers), devices=devices, timeout_factor=timeout_factor)
    done = run_comparison(campaign, out, baseline=baseline, alpha=alpha, cles_threshold=cles_threshold,
                          success=success, workers=workers, scheduler=scheduler, plots=plots, progress=progress)
    return outcome(done, {t.label for t in campaign.tuners if t.oracle})
