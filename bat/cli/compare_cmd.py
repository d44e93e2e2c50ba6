"""``bat compare``: repeated runs of several tuners, statistics, outputs and a CI gate.

Exit status: 0 when done (and, with ``--baseline``, nothing regressed), 3
when a cell regressed against the baseline, 2 on a usage or BAT error.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from bat.cli.options import finite
from bat.cli.output import EXIT_FOUND, document, markup, progress, say

if TYPE_CHECKING:
    from bat.analysis.compare.study import Comparison

#: Seconds to wait for a --scheduler to answer.
SCHEDULER_TIMEOUT_S = 10


def _split(text: str | None, option: str = "") -> list[str] | None:
    """The items of a comma-separated option; an option given with no item is an error, not the default."""
    if text is None:
        return None
    items = [p.strip() for p in text.split(",")]
    if not all(items):
        raise typer.BadParameter(f"an empty item in {text!r}; give comma-separated values", param_hint=option)
    return items


def compare(
    tuners: str = typer.Option(None, "--tuners", "-t",
                               help="Comma-separated NAME or LABEL=NAME; NAME is a registered tuner or "
                                    "package.module:Class."),
    tuner_options: list[Path] = typer.Option([], "--tuner-options",
                                             help="An options file (bat hypertune writes one) for the tuner it "
                                                  "names (repeatable)."),
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
    baseline: Path = typer.Option(None, "--baseline", help="results.json of an earlier run: exit 3 when a "
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
    formats: str = typer.Option("png", "--format", help="Figure formats, comma-separated: png, svg, pdf (PNG "
                                                         "always: the summary embeds it)."),
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
    from bat.analysis.compare.study import compare as run_comparison
    from bat.analysis.compare.study import plan_campaign
    from bat.analysis.plots import figure_formats
    from bat.cli.analyze_cmd import figure_format_list

    try:
        budget_list = [int(b) for b in (_split(budgets, "--budgets") or [])]
    except ValueError as exc:
        raise typer.BadParameter(f"integers expected, got {budgets!r}", param_hint="--budgets") from exc
    bench_list = _split(benchmarks, "--benchmarks")
    campaign = plan_campaign(tuners=_split(tuners, "--tuners"), benchmarks=None if bench_list == ["all"] else
                             bench_list, datasets=_split(datasets, "--datasets"), gpus=_split(gpus, "--gpus"),
                             budgets=budget_list, repeats=repeats, seed=seed, preset=preset, remeasure=remeasure,
                             backend=backend, noise=noise, tuner_options=[str(p) for p in tuner_options],
                             oracles=oracles, tuner_charge_s=tuner_charge, isolate=isolate)
    if scheduler:
        _check_scheduler(scheduler)
    if isolate:  # the first line says which sandbox the tuners get
        from bat.tuner_adapters.sandbox import Sandbox

        say("{}", Sandbox((), ()).describe())
    chosen = figure_format_list(formats)
    with progress("runs") as moved, figure_formats(chosen):
        done = run_comparison(campaign, out, baseline=baseline, alpha=alpha, cles_threshold=cles_threshold,
                              success=success, workers=workers, scheduler=scheduler, plots=plots,
                              progress=lambda k, n: moved(k, n))
    report(done, out, oracle_labels={t.label for t in campaign.tuners if t.oracle})
    if done.regressed:
        raise typer.Exit(EXIT_FOUND)


def report(done: Comparison, out: Path, oracle_labels: set[str] | frozenset[str] = frozenset()) -> None:
    """What ``bat compare`` prints: runs, outputs, data flags, scores (oracles apart) and the gate's verdict
    (and its document)."""
    say("{} runs executed, {} reused from {} ({:.1f} s)", done.run.executed, done.run.reused, out / "runs.sqlite",
        done.run.wall_s)
    say("summary: {}; numbers and traces: {}", done.paths["summary"], done.paths["json"])
    for record in done.run.records:  # a tuner that misbehaved: one line per run, the campaign went on
        m = record.meta
        if warning := m.get("tuner_report", {}).get("warning"):
            say("[yellow]warning:[/] {} on {}/{} repeat {}: {}", m.get("label"), m.get("benchmark"), m.get("gpu"),
                m.get("repeat"), warning)
    result = done.analysis
    m = result.methodology
    flags = []
    for t in (m.targets if m is not None else []):
        if t.check.flagged:
            flags.append({"target": t.name, "messages": [f.message for f in t.check.flags]})
            say("[yellow]data check flagged {}:[/] {}", t.name, "; ".join(f.message for f in t.check.flags))
    scores = {}
    tuners = [label for label in result.scores if label not in oracle_labels]
    apart = [label for label in result.scores if label in oracle_labels]
    for label in tuners + apart:
        if label == (apart[0] if apart else None):
            say("oracles (they read the target's measurements, which no real tuner has; not ranked with the "
                "tuners above):")
        s = result.scores[label]
        score = "-" if s["overall"] is None else f"{s['overall']:+.3f}"
        line = markup("  {}: score {} (mean relative performance against random search's expectation)", label, score)
        scores[label] = {"score": s["overall"]}
        if m is not None:
            for axis in ("evaluations", "time"):
                a = m.aggregate(label, axis)
                scores[label][f"methodology_{axis}"] = {k: a[k] for k in ("score", "ci_low", "ci_high")}
                if a["score"] is not None:
                    ci = f" [{a['ci_low']:+.3f}, {a['ci_high']:+.3f}]" if a["ci_low"] is not None else ""
                    line = markup("{}; methodology score on {} {:+.3f}{}", line, axis, a["score"], ci)
        say("{} (0 = random search, 1 = the optimum)", line)
    doc = {"executed": done.run.executed, "reused": done.run.reused, "wall_s": done.run.wall_s,
           "outputs": {k: str(v) for k, v in done.paths.items()}, "data_flags": flags, "scores": scores,
           "gate": None}
    g = result.gate
    if g is None:
        document(doc)
        return
    compared = done.compared
    regressed = [] if g.regressed is None else [
        {"label": r.label, "benchmark": r.benchmark, "gpu": r.gpu, "budget": int(r.budget), "median": r.median,
         "median_baseline": r.median_baseline, "cles_better": r.cles_better, "p_holm": r.p_holm}
        for r in g.regressed.itertuples()]
    doc["gate"] = {"baseline": str(done.baseline), "compared": list(compared), "passed": bool(compared) and g.passed,
                   "regressed": regressed}
    document(doc)
    say("gate: {} cell(s) compared with {}: {}", len(compared), done.baseline, "; ".join(compared) or "none")
    if not compared:
        say("[red]gate failed[/]: no cell compared (expected {})", "; ".join(done.gated))
    elif g.passed:
        say("gate passed: no cell significantly worse than {}", done.baseline)
    else:
        for r in regressed:
            say("[red]regressed[/]: {} on {}/{} at {} (median {:.3f} vs {:.3f}, CLES {:.2f}, p {:.2g})", r["label"],
                r["benchmark"], r["gpu"], r["budget"], r["median"], r["median_baseline"], r["cles_better"],
                r["p_holm"])


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
