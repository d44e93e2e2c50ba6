"""``bat compare``: repeated runs of several tuners, statistics, outputs and a CI gate.

Exit status: 0 when done (and, with ``--baseline``, nothing regressed), 1
when a cell regressed against the baseline, 2 on a usage or BAT error.
"""

from __future__ import annotations

from pathlib import Path

import typer

from bat.cli.options import finite

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
) -> None:
    """Compare tuners over repeated seeded runs; report statistics and optionally gate on a baseline."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from bat.analysis.compare.assess import analyse, gate
    from bat.analysis.compare.baseline import check_overlap, load_baseline
    from bat.analysis.compare.campaign import Campaign, CampaignError, TunerSpec, dataset_targets, resolve_targets
    from bat.analysis.compare.execute import run_campaign
    from bat.analysis.compare.methodology import parse_success
    from bat.analysis.compare.presets import preset as get_preset
    from bat.analysis.compare.report import write_outputs
    from bat.cli.console import console
    from bat.core.atomic import check_output_folder
    from bat.core.locking import FolderLock

    success = parse_success(success)  # a bad value fails before any run
    p = get_preset(preset) if preset else None
    tuner_list = _split(tuners) or (list(p.tuners) if p else None)
    if not tuner_list:
        raise typer.BadParameter("give --tuners or --preset", param_hint="--tuners")
    try:
        budget_list = [int(b) for b in (_split(budgets) or [])] or (list(p.budgets) if p else
                                                                    [25, 50, 100, 200, 400])
    except ValueError as exc:
        raise typer.BadParameter(f"integers expected, got {budgets!r}", param_hint="--budgets") from exc
    if datasets:
        if benchmarks != "all" or gpus:
            raise CampaignError("--dataset: give --dataset or --benchmarks/--gpus, not both")
        if backend != "replay":
            raise CampaignError(f"--dataset replays recorded data; it cannot run on backend {backend!r}")
        targets, chosen = dataset_targets(_split(datasets) or [])
    else:
        targets, chosen = resolve_targets(_split(benchmarks), _split(gpus)), ()
    campaign = Campaign(
        tuners=tuple(TunerSpec.parse(t) for t in tuner_list),
        targets=targets, datasets=chosen,
        budgets=tuple(budget_list), repeats=repeats, seed=seed,
        remeasure=remeasure if remeasure is not None else (p.remeasure if p else 0),
        backend=backend, notes=(p.note,) if p else (), noise=noise,
    )
    for t in campaign.tuners:
        t.build()  # an unknown or broken tuner fails before any run
    base = load_baseline(baseline) if baseline else None  # and a baseline that could not gate this campaign
    gated = check_overlap(campaign, base, str(baseline)) if base is not None else []
    if scheduler:
        _check_scheduler(scheduler)
    check_output_folder(out, what="--out")
    with FolderLock(out, "--out"):  # a second campaign on this folder exits 2 naming this one
        with Progress(TextColumn("runs"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=True) as bar:
            task = bar.add_task("runs", total=None)
            done = run_campaign(campaign, out, workers=workers, scheduler=scheduler,
                                progress=lambda k, n: bar.update(task, completed=k, total=n))
        console.print(f"{done.executed} runs executed, {done.reused} reused from {out / 'runs.sqlite'} "
                      f"({done.wall_s:.1f} s)")
        result = analyse(campaign, done.records, alpha=alpha, success=success)
        if base is not None:
            result.gate = gate(result, base, source=str(baseline), alpha=alpha, cles_threshold=cles_threshold)
        paths = write_outputs(out, campaign, result, done.records, plots=plots)
        console.print(f"summary: {paths['summary']}; numbers and traces: {paths['json']}")
        m = result.methodology
        for t in (m.targets if m is not None else []):
            if t.check.flagged:
                console.print(f"[yellow]data check flagged {t.name}:[/] " + "; ".join(f.message for f in t.check.flags),
                              highlight=False)
        for label, s in result.scores.items():
            score = "-" if s["overall"] is None else f"{s['overall']:+.3f}"
            line = f"  {label}: score {score} (mean relative performance against random search's expectation)"
            if m is not None:
                for axis in ("evaluations", "time"):
                    a = m.aggregate(label, axis)
                    if a["score"] is not None:
                        ci = f" [{a['ci_low']:+.3f}, {a['ci_high']:+.3f}]" if a["ci_low"] is not None else ""
                        line += f"; methodology score on {axis} {a['score']:+.3f}{ci}"
            console.print(line + " (0 = random search, 1 = the optimum)", highlight=False)
        if result.gate is not None:
            g = result.gate
            compared = ["{} on {}/{} at {}".format(*c) for c in g.cells[["label", "benchmark", "gpu", "budget"]]
                        .itertuples(index=False, name=None)]
            console.print(f"gate: {len(compared)} cell(s) compared with {baseline}: {'; '.join(compared) or 'none'}",
                          highlight=False)
            if not compared:
                console.print(f"[red]gate failed[/]: no cell compared (expected {'; '.join(gated)})", highlight=False)
                raise typer.Exit(1)
            if g.passed:
                console.print(f"gate passed: no cell significantly worse than {baseline}")
            else:
                for r in g.regressed.itertuples():
                    console.print(f"[red]regressed[/]: {r.label} on {r.benchmark}/{r.gpu} at {r.budget} "
                                  f"(median {r.median:.3f} vs {r.median_baseline:.3f}, CLES {r.cles_better:.2f}, "
                                  f"p {r.p_holm:.2g})", highlight=False)
                raise typer.Exit(1)


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
