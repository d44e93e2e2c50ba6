"""``bat hypertune``: tune a tuner's declared hyper-parameters on training datasets, check them on held-out ones.

Every input is checked before anything runs (one line, exit 2). Progress goes
to stderr: units done, the best training score so far and the estimated time
left (off a terminal at most one line every 10 s). The result is
``OUT/best-options.json`` (for ``--tuner-options`` of ``bat run`` and ``bat
compare``), ``OUT/hypertune.json`` and ``OUT/report.md`` with its figures;
``--json`` prints it as one document.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from bat.cli.console import err_console
from bat.cli.options import MAX_REPEATS, MAX_SEED, MAX_WORKERS
from bat.core.limits import MAX_BUDGET


def _split(text: str | None) -> list[str] | None:
    return [p.strip() for p in text.split(",") if p.strip()] if text else None


def hypertune(
    tuner: str = typer.Option(..., "--tuner", "-t", help="The tuner to tune (a registered name; `bat list tuners "
                                                         "--options` shows what it declares)."),
    search: str = typer.Option("random", "--search", help="The searcher: random, grid, tpe (Optuna), or any "
                                                          "registered tuner."),
    settings: int = typer.Option(30, "--settings", "-n", max=MAX_REPEATS,
                                 help="Settings the searcher tries (the defaults are "
                                                              "tried as well)."),
    params: str = typer.Option(None, "--params", help="Comma-separated options to tune (default: all declared)."),
    ranges: list[str] = typer.Option([], "--range", help="Narrow an option: KEY=LOW:HIGH, or KEY=A|B for a "
                                                         "choice (repeatable)."),
    points: int = typer.Option(8, "--points", max=MAX_REPEATS,
                               help="Values tried per numeric option (random and tpe)."),
    train: str = typer.Option(None, "--train", help="Comma-separated training datasets (ids or files)."),
    heldout: str = typer.Option(None, "--heldout", help="Comma-separated held-out datasets (ids or files)."),
    split: str = typer.Option(None, "--split", help="Instead of --train/--heldout: benchmarks:A,B "
                                                    "(leave-benchmarks-out) or gpus:X,Y (leave-GPUs-out) of --pool."),
    pool: str = typer.Option(None, "--pool", help="Comma-separated datasets that --split divides (default: all)."),
    budget: int = typer.Option(100, "--budget", max=MAX_BUDGET, help="Evaluations per inner run."),
    repeats: int = typer.Option(5, "--repeats", "-r", max=MAX_REPEATS,
                                help="Inner runs per training dataset and setting."),
    final_repeats: int = typer.Option(10, "--final-repeats", max=MAX_REPEATS,
                                      help="Runs per dataset of the final comparison."),
    seed: int = typer.Option(0, "--seed", "-s", min=0, max=MAX_SEED, help="Seed of the search and of the inner runs."),
    batch: int = typer.Option(0, "--batch", max=MAX_WORKERS,
                              help="Settings proposed at a time (0: the workers, or the Dask "
                                                 "cluster's threads)."),
    workers: int = typer.Option(1, "--workers", "-j", min=1, max=MAX_WORKERS,
                                help="Local worker processes (1: in this process)."),
    scheduler: str = typer.Option(None, "--scheduler", help="Dask scheduler address: units run there."),
    out: Path = typer.Option(Path("hypertune-out"), "--out", "-o",
                             help="Output folder; finished units (OUT/units.sqlite) are reused on a rerun."),
    plots: bool = typer.Option(True, "--report/--no-report", help="Write report.md and its figures."),
    hub: Path = typer.Option(None, "--hub", help="The FAIR Benchmark Hub's brute force of this Kernel Tuner "
                                                 "strategy (hyperparamtuning_paper_bruteforce_<strategy>.json): "
                                                 "its grid is searched and its scores rank-correlated with ours."),
) -> None:
    """Search a tuner's hyper-parameters on training datasets; compare the best with the defaults on held-out ones."""
    from bat.analysis.hypertune.driver import hypertune as run_hypertune
    from bat.analysis.hypertune.driver import plan
    from bat.analysis.hypertune.splits import make_split
    from bat.cli.output import document, say

    chosen = make_split(train=_split(train), heldout=_split(heldout), pool=_split(pool), split=split)
    p = plan(tuner=tuner, split=chosen, searcher=search, params=_split(params), ranges=list(ranges),
             settings=settings, budget=budget, repeats=repeats, final_repeats=final_repeats, seed=seed,
             points=points, batch=batch, hub=hub)
    if scheduler:
        from bat.cli.compare_cmd import _check_scheduler

        _check_scheduler(scheduler)
    outcome = run_hypertune(p, out, workers=workers, scheduler=scheduler, progress=unit_progress(), report=plots)
    f = outcome.final
    for name in ("train", "heldout"):
        b, d, i = f[name]["best"], f[name]["defaults"], f[name]["improvement"]
        say("{}: best {}, defaults {}, improvement {}", name, _ci(b), _ci(d), _ci(i))
    gap = f["generalisation_gap"]
    say("generalisation gap: {}; best setting: {}", "n/a" if gap is None else f"{gap:+.3f}", outcome.best)
    if outcome.hub is not None:
        h = outcome.hub
        say("against the hub's brute force: {} shared settings, Spearman {}; ours: {}; the hub's: {}",
            h["shared_settings"], "n/a" if h["spearman"] is None else f"{h['spearman']:+.3f}", h["ours"], h["hub"])
    say("units run {}, reused {}; options: {}; report: {}", outcome.executed, outcome.reused,
        outcome.paths["options"], outcome.paths.get("report", outcome.paths["json"]))
    document({"best": outcome.best, "final": f, "units_run": outcome.executed, "units_reused": outcome.reused,
              "options": str(outcome.paths["options"]), "results": str(outcome.paths["json"]),
              "hub": outcome.hub})


def unit_progress() -> Callable[[str, int, int, float | None, float | None], None]:
    """Units done in each phase (the search, then the final comparison: each against its own total), the best
    score so far and the phase's time left, on stderr: every unit on a terminal, else at most one line every
    10 s, and the first and last of each phase; nothing under ``--quiet`` or ``--json``."""
    from bat.cli.output import PROGRESS_EVERY_S, mode, say_err

    last: list[Any] = [float("-inf"), None]

    def show(phase: str, done: int, total: int, best: float | None, left: float | None) -> None:
        now = time.monotonic()
        if mode.quiet or mode.json:
            return
        if (not err_console.is_terminal and now - last[0] < PROGRESS_EVERY_S and done < total
                and phase == last[1]):
            return
        last[:] = [now, phase]
        what = "settings tried" if phase == "search" else "final runs"
        say_err("{}: {} {}/{}, best training score {}, about {} left", phase, what, done, total,
                "n/a" if best is None else f"{best:.3f}", "?" if left is None else f"{left / 60:.1f} min")

    return show


def _ci(d: dict) -> str:
    def num(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.3f}"

    return f"{num(d['score'])} [{num(d['ci_low'])}, {num(d['ci_high'])}]"


def register(app: typer.Typer) -> None:
    app.command("hypertune")(hypertune)
