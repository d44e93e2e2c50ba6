"""``bat compare``: repeated runs of several tuners, statistics, outputs and a CI gate.

Exit status: 0 when done (and, with ``--baseline``, nothing regressed), 1
when a cell regressed against the baseline, 2 on a usage or BAT error.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from bat.cli.options import finite

if TYPE_CHECKING:
    from bat.analysis.compare.study import Comparison

#: Seconds to wait for a --scheduler to answer.
SCHEDULER_TIMEOUT_S = 10


def _split(text: str | None) -> list[str] | None:
    return [p.strip() for p in text.split(",") if p.strip()] if text else None


def compare(
    tuners: str = typer.Option(None, "--tuners", "-t",
                               help="Comma-separated NAME or LABEL=NAME; NAME is a registered tuner or "
                                    "package.module:Class."),
    benchmarks: str = typer.Option("all", "--benchmarks", "-b",
                                   help="Comma-separated benchmarks (names or space files), or all."),
    datasets: str = typer.Option(None, "--dataset", "-d",
                                 help="Comma-separated datasets (files or ids) to compare on, instead of "
                                      "--benchmarks/--gpus."),
    gpus: str = typer.Option(None, "--gpus", help="Comma-separated GPUs, or all (default: each benchmark's "
                                                  "default GPU)."),
    budgets: str = typer.Option(None, "--budgets", help="Comma-separated evaluation budgets "
                                                        "(default 25,50,100,200,400)."),
    repeats: int = typer.Option(10, "--repeats", "-r", min=1, help="Runs per cell, each with its own seed."),
    seed: int = typer.Option(0, "--seed", "-s", min=0, help="Campaign seed (run seeds derive from it)."),
    out: Path = typer.Option(Path("compare-out"), "--out", "-o",
                             help="Output folder; finished runs (OUT/runs.sqlite) are reused on a rerun."),
    baseline: Path = typer.Option(None, "--baseline", help="results.json of an earlier run: exit 1 when a "
                                                           "cell is significantly worse."),
    alpha: float = typer.Option(0.05, "--alpha", min=0.0, max=1.0, callback=finite,
                                help="Significance level (after Holm)."),
    cles_threshold: float = typer.Option(0.4, "--cles-threshold", min=0.0, max=1.0, callback=finite,
                                         help="Gate: a cell regresses only when CLES(current better than "
                                              "baseline) is below this."),
    workers: int = typer.Option(1, "--workers", "-j", min=1, help="Local worker processes (1: in this "
                                                                   "process)."),
    scheduler: str = typer.Option(None, "--scheduler", help="Dask scheduler address (tcp://host:8786): run "
                                                            "there instead of locally."),
    preset: str = typer.Option(None, "--preset", help="A campaign design: sample-size-study."),
    remeasure: int = typer.Option(None, "--remeasure", min=0,
                                  help="Re-measure each final configuration this many times (default 0; "
                                       "the preset: 10)."),
    backend: str = typer.Option("replay", "--backend", help="replay (recorded data) or live (the GPU, one "
                                                            "run at a time)."),
    plots: bool = typer.Option(True, "--plots/--no-plots", help="Write convergence plots."),
    success: str = typer.Option("noise", "--success",
                                help="A successful run holds a configuration in the noise-aware optimum set "
                                     "(noise), or within RATIO x the best recorded time (e.g. 1.05)."),
    noise: str = typer.Option("none", "--noise",
                              help="Replay: none (recorded objective), repeat (one recorded repeated time) or "
                                   "bootstrap (mean of a resample of the repeats), drawn with each run's seed."),
    oracles: bool = typer.Option(False, "--oracles", help="Include oracles (tuners that read the target's "
                                                          "measurements), shown apart."),
    tuner_charge: float = typer.Option(None, "--tuner-charge", min=0.0, callback=finite,
                                       help="Charge this many seconds of tuner time per proposal (a declared "
                                            "cost model: a deterministic time axis) instead of measuring it."),
    isolate: bool = typer.Option(False, "--isolate", help="Run each tuner in its own sandboxed process over "
                                                          "the BAT protocol (docs/RELIABILITY.md)."),
) -> None:
    """Compare tuners over repeated seeded runs; report statistics and optionally gate on a baseline."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from bat.analysis.compare.study import compare as run_comparison
    from bat.analysis.compare.study import plan_campaign
    from bat.cli.console import console

    try:
        budget_list = [int(b) for b in (_split(budgets) or [])]
    except ValueError as exc:
        raise typer.BadParameter(f"integers expected, got {budgets!r}", param_hint="--budgets") from exc
    bench_list = _split(benchmarks)
    campaign = plan_campaign(tuners=_split(tuners), benchmarks=None if bench_list == ["all"] else bench_list,
                             datasets=_split(datasets), gpus=_split(gpus), budgets=budget_list, repeats=repeats,
                             seed=seed, preset=preset, remeasure=remeasure, backend=backend, noise=noise,
                             oracles=oracles, tuner_charge_s=tuner_charge, isolate=isolate)
    if scheduler:
        _check_scheduler(scheduler)
    if isolate:  # the first line says which sandbox the tuners get
        from bat.tuner_adapters.sandbox import Sandbox

        console.print(escape(Sandbox((), ()).describe()), highlight=False, soft_wrap=True)
    with Progress(TextColumn("runs"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task("runs", total=None)
        done = run_comparison(campaign, out, baseline=baseline, alpha=alpha, cles_threshold=cles_threshold,
                              success=success, workers=workers, scheduler=scheduler, plots=plots,
                              progress=lambda k, n: bar.update(task, completed=k, total=n))
    report(done, out, oracle_labels={t.label for t in campaign.tuners if t.oracle})
    if done.regressed:
        raise typer.Exit(1)


def report(done: Comparison, out: Path, oracle_labels: set[str] | frozenset[str] = frozenset()) -> None:
    """What ``bat compare`` prints: runs, outputs, data flags, scores (oracles apart) and the gate's verdict."""
    from bat.cli.console import console

    console.print(f"{done.run.executed} runs executed, {done.run.reused} reused from {out / 'runs.sqlite'} "
                  f"({done.run.wall_s:.1f} s)", highlight=False, soft_wrap=True)
    console.print(f"summary: {done.paths['summary']}; numbers and traces: {done.paths['json']}",
                  highlight=False, soft_wrap=True)
    for record in done.run.records:  # a tuner that misbehaved: one line per run, the campaign went on
        m = record.meta
        if warning := m.get("tuner_report", {}).get("warning"):
            console.print("[yellow]warning:[/] " + escape(f"{m.get('label')} on {m.get('benchmark')}/{m.get('gpu')} "
                                                          f"repeat {m.get('repeat')}: {warning}"),
                          highlight=False, soft_wrap=True)
    result = done.analysis
    m = result.methodology
    for t in (m.targets if m is not None else []):
        if t.check.flagged:
            console.print(f"[yellow]data check flagged {escape(t.name)}:[/] "
                          + escape("; ".join(f.message for f in t.check.flags)), highlight=False)
    tuners = [label for label in result.scores if label not in oracle_labels]
    apart = [label for label in result.scores if label in oracle_labels]
    for label in tuners + apart:
        if label == (apart[0] if apart else None):
            console.print("oracles (they read the target's measurements, which no real tuner has; not ranked "
                          "with the tuners above):", highlight=False)
        s = result.scores[label]
        score = "-" if s["overall"] is None else f"{s['overall']:+.3f}"
        line = f"  {label}: score {score} (mean relative performance against random search's expectation)"
        if m is not None:
            for axis in ("evaluations", "time"):
                a = m.aggregate(label, axis)
                if a["score"] is not None:
                    ci = f" [{a['ci_low']:+.3f}, {a['ci_high']:+.3f}]" if a["ci_low"] is not None else ""
                    line += f"; methodology score on {axis} {a['score']:+.3f}{ci}"
        console.print(escape(line) + " (0 = random search, 1 = the optimum)", highlight=False)
    g = result.gate
    if g is None:
        return
    compared = done.compared
    console.print(escape(f"gate: {len(compared)} cell(s) compared with {done.baseline}: "
                         f"{'; '.join(compared) or 'none'}"), highlight=False)
    if not compared:
        console.print(f"[red]gate failed[/]: no cell compared (expected {escape('; '.join(done.gated))})",
                      highlight=False)
    elif g.passed:
        console.print(escape(f"gate passed: no cell significantly worse than {done.baseline}"), highlight=False)
    else:
        for r in g.regressed.itertuples():
            console.print("[red]regressed[/]: " + escape(
                f"{r.label} on {r.benchmark}/{r.gpu} at {r.budget} (median {r.median:.3f} vs "
                f"{r.median_baseline:.3f}, CLES {r.cles_better:.2f}, p {r.p_holm:.2g})"), highlight=False)


def _check_scheduler(address: str) -> None:
    """Connect to the Dask scheduler once, so a wrong address fails before anything is written."""
    from bat.core.errors import BackendError, MissingDependencyError

    try:
        from distributed import Client
    except ImportError as exc:
        raise MissingDependencyError("--scheduler needs dask[distributed] (the 'scale' group)") from exc
    try:
        with Client(address, timeout=SCHEDULER_TIMEOUT_S):
            pass
    except (OSError, ValueError) as exc:
        raise BackendError(f"--scheduler {address}: cannot connect ({exc})") from None


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)
