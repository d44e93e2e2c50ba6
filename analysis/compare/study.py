"""A whole comparison as one library call: the campaign from names, its runs, statistics, outputs and gate.

``plan_campaign`` turns what a user names (tuners, benchmarks or datasets,
GPUs, budgets, a preset) into a checked ``Campaign``, failing before any run
on an unknown or broken tuner. ``compare`` runs it into an output folder
(locked against a second campaign; finished runs are reused), analyses it,
gates it against a baseline and writes the outputs: what ``bat compare`` and
a notebook call alike.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from bat.analysis.compare.assess import Analysis, analyse, gate
from bat.analysis.compare.baseline import check_overlap, load_baseline
from bat.analysis.compare.methodology import parse_success
from bat.analysis.compare.report import write_outputs
from bat.analysis.compare.warm import warm_up
from bat.campaign.design import Campaign, CampaignError, TunerSpec, dataset_targets, resolve_targets
from bat.campaign.execute import CampaignRun, check_store, run_campaign
from bat.campaign.presets import preset as get_preset
from bat.core.atomic import check_output_folder
from bat.core.hyperparams import read_options_file
from bat.core.locking import FolderLock

#: budgets of a campaign that names none
DEFAULT_BUDGETS = (25, 50, 100, 200, 400)


def plan_campaign(*, tuners: list[str] | None, benchmarks: list[str] | None = None,
                  datasets: list[str] | None = None, gpus: list[str] | None = None,
                  budgets: list[int] | None = None, repeats: int = 10, seed: int = 0, preset: str | None = None,
                  remeasure: int | None = None, backend: str = "replay", noise: str = "none",
                  tuner_options: list[str] | None = None, oracles: bool = False, tuner_charge_s: float | None = None,
                  isolate: bool = False, compile_workers: list[int] | None = None, devices: int = 1,
                  timeout_factor: float | None = None) -> Campaign:
    """The campaign of these names (a preset fills what is not given); every tuner is built once to fail early.

    ``tuner_options`` are options files (``bat hypertune`` writes them): each applies to the tuners of
    the campaign named as the file names its tuner. An oracle (a tuner that reads the target's
    measurements, bat.core.facts) is refused unless ``oracles``; isolated, it is refused always (its
    answer key would have to leave the harness process). ``compile_workers``: every tuner runs at each
    K (labelled ``LABEL@kK`` when there are several), on ``devices`` devices (bat.core.schedule), with
    ``timeout_factor`` (bat.core.timeouts).
    """
    p = get_preset(preset) if preset else None
    tuner_list = tuners or (list(p.tuners) if p else None)
    if not tuner_list:
        raise CampaignError("--tuners: give --tuners or --preset")
    if datasets:
        if benchmarks or gpus:
            raise CampaignError("--dataset: give --dataset or --benchmarks/--gpus, not both")
        if backend != "replay":
            raise CampaignError(f"--dataset replays recorded data; it cannot run on backend {backend!r}")
        targets, chosen = dataset_targets(datasets)
    else:
        targets, chosen = resolve_targets(benchmarks, gpus), ()
    specs = [TunerSpec.parse(t) for t in tuner_list]
    for path in tuner_options or ():
        name, pairs = read_options_file(path)
        hits = [i for i, t in enumerate(specs) if t.spec == name]
        if not hits:
            raise CampaignError(f"--tuner-options {path}: its tuner {name} is not among --tuners")
        for i in hits:
            specs[i] = replace(specs[i], options=pairs)
    ks = sorted(set(compile_workers or [1]))
    specs = [t.at_workers(k, len(ks) > 1) for t in specs for k in ks]
    campaign = Campaign(
        tuners=tuple(specs), targets=targets, datasets=chosen,
        budgets=tuple(budgets or (p.budgets if p else DEFAULT_BUDGETS)), repeats=repeats, seed=seed,
        remeasure=remeasure if remeasure is not None else (p.remeasure if p else 0),
        backend=backend, notes=(p.note,) if p else (), noise=noise, tuner_charge_s=tuner_charge_s, isolate=isolate,
        devices=devices, timeout_factor=timeout_factor,
    )
    for t in campaign.tuners:
        t.build()  # an unknown or broken tuner fails before any run
        if t.oracle and not oracles:
            raise CampaignError(f"--tuners {t.label}: {t.spec} is an oracle (it reads the target's measurements, "
                                "which no real tuner has); add --oracles to include it, shown apart")
        if t.oracle and isolate:
            raise CampaignError(f"--tuners {t.label}: {t.spec} is an oracle; oracles cannot run --isolate "
                                "(the target's measurements never leave the harness process)")
        if isolate:  # loaded once in its sandbox: a tuner its isolated process cannot import fails here
            from bat.registry import make_tuner

            make_tuner(f"isolate:{t.spec}", options=t.options)
    return campaign


@dataclass
class Comparison:
    """What a comparison ran, found and wrote."""

    run: CampaignRun
    analysis: Analysis
    paths: dict[str, Path]
    baseline: Path | None = None
    gated: list[str] = field(default_factory=list)  # the cells the baseline holds

    @property
    def compared(self) -> list[str]:
        """The cells compared with the baseline ("label on benchmark/gpu at budget")."""
        g = self.analysis.gate
        if g is None:
            return []
        cells: pd.DataFrame = g.cells[["label", "benchmark", "gpu", "budget"]]
        return ["{} on {}/{} at {}".format(*c) for c in cells.itertuples(index=False, name=None)]

    @property
    def regressed(self) -> bool:
        """A baseline was given and the gate did not pass (a regression, or nothing compared)."""
        return self.analysis.gate is not None and not self.analysis.gate.passed


def figure_processes(workers: int, scheduler: str | None) -> int:
    """Processes that draw a campaign's figures: its local workers, or this machine's CPUs for a Dask run."""
    if scheduler is None:
        return workers
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def check_noise_data(campaign: Campaign) -> None:
    """Every replayed target's data gives the score its baseline (a dataset with no valid measurement, or one
    time for all, is refused) and a replay noise mode has repeated times to draw from (ReplayBackend refuses
    data without any): checked before the folder's lock and run store are made."""
    if campaign.backend == "replay":
        from bat.analysis.compare.methodology import target_parts

        for bench, gpu in campaign.targets:
            target_parts(campaign, bench, gpu)  # kept for the analysis of this process
    if campaign.noise == "none":
        return
    from bat.run.targets import replay_target

    for bench, gpu in campaign.targets:
        path = campaign.dataset_for(bench, gpu)
        replay_target(bench, gpu, path=Path(path) if path else None, noise=campaign.noise).backend.close()


def compare(campaign: Campaign, out: str | Path, *, baseline: str | Path | None = None, alpha: float = 0.05,
            cles_threshold: float = 0.4, success: str = "noise", workers: int = 1, scheduler: str | None = None,
            plots: bool = True, progress: Callable[[int, int], None] | None = None) -> Comparison:
    """Run ``campaign`` into ``out``, analyse it, gate it against ``baseline`` and write the outputs."""
    success = parse_success(success)  # a bad value fails before any run
    base = load_baseline(baseline) if baseline else None  # and a baseline that could not gate this campaign
    gated = check_overlap(campaign, base, str(baseline)) if base is not None else []
    out = check_output_folder(Path(out), what="--out")
    check_noise_data(campaign)
    check_store(campaign, out)  # a damaged run store is refused before the lock file is made
    with FolderLock(out, "--out"):  # a second campaign on this folder fails naming this one
        parallel = campaign.backend != "live" and (workers > 1 or scheduler is not None)
        done = run_campaign(campaign, out, workers=workers, scheduler=scheduler, progress=progress,
                            alongside=functools.partial(warm_up, campaign, plots=plots))
        result = analyse(campaign, done.records, alpha=alpha, success=success)
        if base is not None:
            result.gate = gate(result, base, source=str(baseline), alpha=alpha, cles_threshold=cles_threshold)
        paths = write_outputs(out, campaign, result, done.records, plots=plots,
                              processes=figure_processes(workers, scheduler) if parallel else 1)
    return Comparison(done, result, paths, Path(baseline) if baseline else None, gated)
