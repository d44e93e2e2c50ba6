"""``bat compare``: repeated runs of several tuners, statistics, outputs and a CI gate.

Exit status: 0 when done (and, with ``--baseline``, nothing regressed), 3
when a cell regressed against the baseline, 2 on a usage or BAT error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from bat.cli.options import (
    MAX_REPEATS,
    MAX_SECONDS,
    MAX_SEED,
    MAX_WORKERS,
    devices_option,
    finite,
    timeout_factor_option,
    worker_count,
)
from bat.cli.output import EXIT_FOUND, document, markup, progress, say

if TYPE_CHECKING:
    from bat.analysis.compare.study import Comparison
    from bat.campaign.design import TunerSpec

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
    gpus: str = typer.Option(None, "--gpus", "--gpu", help="Comma-separated GPUs, or all (default: each benchmark's "
                                                  "default GPU)."),
    budgets: str = typer.Option(None, "--budgets", help="Comma-separated evaluation budgets "
                                                        "(default 25,50,100,200,400)."),
    repeats: int = typer.Option(None, "--repeats", "-r", min=1, max=MAX_REPEATS,
                                help="Runs per cell, each with its own seed "
                                                                      "(default 10; --study transfer: 20)."),
    seed: int = typer.Option(0, "--seed", "-s", min=0, max=MAX_SEED, help="Campaign seed (run seeds derive from it)."),
    out: Path = typer.Option(Path("compare-out"), "--out", "-o",
                             help="Output folder; finished runs (OUT/runs.sqlite) are reused on a rerun."),
    baseline: Path = typer.Option(None, "--baseline", help="results.json of an earlier run: exit 3 when a "
                                                           "cell is significantly worse."),
    alpha: float = typer.Option(0.05, "--alpha", min=0.0, max=1.0, callback=finite,
                                help="Significance level (after Holm)."),
    cles_threshold: float = typer.Option(0.4, "--cles-threshold", min=0.0, max=1.0, callback=finite,
                                         help="Gate: a cell regresses only when CLES(current better than "
                                              "baseline) is below this."),
    workers: int = typer.Option(1, "--workers", "-j", min=1, max=MAX_WORKERS, help="Local worker processes (1: in this "
                                                                   "process)."),
    scheduler: str = typer.Option(None, "--scheduler", help="Dask scheduler address (tcp://host:8786): run "
                                                            "there instead of locally."),
    preset: str = typer.Option(None, "--preset", help="A campaign design: sample-size-study."),
    study: str = typer.Option(None, "--study", help="A study instead of a campaign: transfer (each GPU held out "
                                                    "in turn, the others' data as the tuner's prior; "
                                                    "docs/compare.md)."),
    remeasure: int = typer.Option(None, "--remeasure", min=0, max=MAX_REPEATS,
                                  help="Re-measure each final configuration this many times (default 0; "
                                       "the preset: 10)."),
    backend: str = typer.Option("replay", "--backend", help="replay (recorded data) or live (the GPU, one "
                                                            "run at a time)."),
    plots: bool = typer.Option(True, "--plots/--no-plots", help="Write convergence plots."),
    formats: str = typer.Option("png", "--format", help="Figure formats, comma-separated: png, svg, pdf (PNG "
                                                         "always: the summary embeds it)."),
    success: str = typer.Option("noise", "--success",
                                help="A successful run holds a configuration in the noise-aware optimum set "
                                     "(noise), or within RATIO x the best recorded time (e.g. 1.05; at most 10)."),
    noise: str = typer.Option("none", "--noise",
                              help="Replay: none (recorded objective), repeat (one recorded repeated time) or "
                                   "bootstrap (mean of a resample of the repeats), drawn with each run's seed."),
    oracles: bool = typer.Option(False, "--oracles", help="Include oracles (tuners that read the target's "
                                                          "measurements), shown apart."),
    tuner_charge: float = typer.Option(None, "--tuner-charge", min=0.0, max=MAX_SECONDS, callback=finite,
                                       help="Charge this many seconds of tuner time per proposal (a declared "
                                            "cost model: a deterministic time axis) instead of measuring it."),
    isolate: bool = typer.Option(False, "--isolate", help="Run each tuner in its own sandboxed process over "
                                                          "the BAT protocol (docs/RELIABILITY.md)."),
    compile_workers: str = typer.Option("1", "--compile-workers",
                                        help="Comma-separated compile workers of the simulated clock: every tuner "
                                             "runs at each (labelled LABEL@kK when several; docs/METHODS.md)."),
    devices: int = devices_option(),
    timeout_factor: float = timeout_factor_option(),
    sealed: Path = typer.Option(None, "--sealed", metavar="DATA_FOLDER",
                                help="Held-back targets: every dataset of this folder outside BAT's tree, every "
                                     "tuner isolated, each run's digests recorded (docs/leaderboard.md)."),
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
    try:
        worker_list = [worker_count(int(k)) for k in (_split(compile_workers, "--compile-workers") or ["1"])]
    except ValueError as exc:
        raise typer.BadParameter(f"integers expected, got {compile_workers!r}", param_hint="--compile-workers") \
            from exc
    bench_list = _split(benchmarks, "--benchmarks")
    if study is not None:
        _transfer(study, tuners=_split(tuners, "--tuners"), benchmarks=bench_list, budgets=budget_list,
                  repeats=repeats, seed=seed, out=out, workers=workers, scheduler=scheduler, plots=plots,
                  formats=formats, tuner_charge=tuner_charge, isolate=isolate,
                  others={"--dataset": datasets, "--gpus": gpus, "--baseline": baseline, "--preset": preset,
                          "--remeasure": remeasure, "--tuner-options": tuner_options or None,
                          "--noise": None if noise == "none" else noise, "--oracles": oracles or None,
                          "--backend": None if backend == "replay" else backend,
                          "--compile-workers": None if worker_list == [1] else compile_workers,
                          "--devices": None if devices == 1 else devices, "--timeout-factor": timeout_factor,
                          "--sealed": sealed})
        return
    repeats = repeats or 10
    held: _Held | None = None
    if sealed is not None:
        held = _held_back(sealed, out, {"--dataset": datasets, "--gpus": gpus, "--preset": preset,
                                        "--benchmarks": None if bench_list == ["all"] else benchmarks,
                                        "--backend": None if backend == "replay" else backend,
                                        "--oracles": oracles or None})
        datasets, isolate = ",".join(str(p) for p in held.files.values()), True
    campaign = plan_campaign(tuners=_split(tuners, "--tuners"), benchmarks=None if bench_list == ["all"] else
                             bench_list, datasets=_split(datasets, "--datasets"), gpus=_split(gpus, "--gpus"),
                             budgets=budget_list, repeats=repeats, seed=seed, preset=preset, remeasure=remeasure,
                             backend=backend, noise=noise, tuner_options=[str(p) for p in tuner_options],
                             oracles=oracles, tuner_charge_s=tuner_charge, isolate=isolate,
                             compile_workers=worker_list, devices=devices, timeout_factor=timeout_factor)
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
    if held is not None:
        _seal(held, out, campaign.tuners)
    report(done, out, oracle_labels={t.label for t in campaign.tuners if t.oracle})
    if done.regressed:
        raise typer.Exit(EXIT_FOUND)


@dataclass(frozen=True)
class _Held:
    """The organiser's folder of a sealed campaign, its dataset per target and their sha256 before the runs."""

    folder: Path
    files: dict[str, Path]
    digests: dict[str, str]


def _held_back(folder: Path, out: Path, others: dict[str, object]) -> _Held:
    """The targets of ``--sealed FOLDER``, checked before anything is written (BatError: exit 2)."""
    from bat.core.errors import BatError
    from bat.leaderboard.sealed import data_files, file_sha256

    if given := [name for name, value in others.items() if value is not None]:
        raise BatError(f"--sealed: {', '.join(given)} cannot be used with it (its targets are the folder's "
                       "datasets, replayed, every tuner isolated)")
    if (out / "runs.sqlite").exists():
        raise BatError(f"--sealed: --out {out} holds runs already; a sealed campaign runs every run afresh "
                       "into a new folder")
    files = data_files(folder)
    return _Held(folder, files, {t: file_sha256(p) for t, p in files.items()})


def _seal(held: _Held, out: Path, tuners: tuple[TunerSpec, ...]) -> None:
    """Record the sealed campaign's digests in its results.json and say so."""
    import bat
    from bat.leaderboard.sealed import code_digest, seal_results

    done = seal_results(out / "results.json", held.folder, held.files, held.digests,
                        {t.label: code_digest(t.spec) for t in tuners}, bat.__version__)
    say("sealed: {} runs on {} held-back targets, each with its dataset's sha256, the tuner's code digest, BAT "
        "{}, its options, seed and trace sha256 (results.json, sealed)", len(done["runs"]), len(held.files),
        done["bat_version"])


def report(done: Comparison, out: Path, oracle_labels: set[str] | frozenset[str] = frozenset()) -> None:
    """What ``bat compare`` prints: runs, outputs, data flags, scores (oracles apart) and the gate's verdict
    (and its document: the fields of ``bat.compare``'s result)."""
    from bat.analysis.compare.outcome import outcome

    found = outcome(done, oracle_labels)
    say("{} runs executed, {} reused from {} ({:.1f} s)", found.executed, found.reused, out / "runs.sqlite",
        found.wall_s)
    say("summary: {}; numbers and traces: {}", found.outputs["summary"], found.outputs["json"])
    for w in found.run_warnings:  # a tuner that misbehaved: one line per run, the campaign went on
        say("[yellow]warning:[/] {} on {}/{} repeat {}: {}", w["label"], w["benchmark"], w["gpu"], w["repeat"],
            w["warning"])
    for flag in found.data_flags:
        say("[yellow]data check flagged {}:[/] {}", flag["target"], "; ".join(flag["messages"]))
    first_oracle = next((label for label in found.scores if label in oracle_labels), None)
    for label, s in found.scores.items():
        if label == first_oracle:
            say("oracles (they read the target's measurements, which no real tuner has; not ranked with the "
                "tuners above):")
        score = "-" if s["score"] is None else f"{s['score']:+.3f}"
        line = markup("  {}: score {} (mean relative performance against random search's expectation)", label, score)
        for axis in ("evaluations", "time"):
            a = s.get(f"methodology_{axis}")
            if a is not None and a["score"] is not None:
                ci = f" [{a['ci_low']:+.3f}, {a['ci_high']:+.3f}]" if a["ci_low"] is not None else ""
                line = markup("{}; methodology score on {} {:+.3f}{}", line, axis, a["score"], ci)
        say("{} (0 = random search, 1 = the optimum)", line)
    document(found.document())
    g = found.gate
    if g is None:
        return
    compared = g["compared"]
    say("gate: {} cell(s) compared with {}: {}", len(compared), g["baseline"], "; ".join(compared) or "none")
    if not compared:
        say("[red]gate failed[/]: no cell compared (expected {})", "; ".join(done.gated))
    elif g["passed"]:
        say("gate passed: no cell significantly worse than {}", g["baseline"])
    else:
        for r in g["regressed"]:
            say("[red]regressed[/]: {} on {}/{} at {} (median {:.3f} vs {:.3f}, CLES {:.2f}, p {:.2g})", r["label"],
                r["benchmark"], r["gpu"], r["budget"], r["median"], r["median_baseline"], r["cles_better"],
                r["p_holm"])


def _transfer(study: str, *, tuners: list[str] | None, benchmarks: list[str] | None, budgets: list[int],
              repeats: int | None, seed: int, out: Path, workers: int, scheduler: str | None, plots: bool,
              formats: str, tuner_charge: float | None, isolate: bool, others: dict[str, object]) -> None:
    """``bat compare --study transfer``: plan, run (or resume) and report the transfer study."""
    from bat.analysis.compare.transfer import plan_transfer, run_transfer, split_name
    from bat.analysis.compare.transfer_report import write_outputs
    from bat.analysis.plots import figure_formats
    from bat.cli.analyze_cmd import figure_format_list
    from bat.core.atomic import check_output_folder
    from bat.core.errors import BatError
    from bat.core.locking import FolderLock

    if study != "transfer":
        raise BatError(f"--study {study!r}: the one study is transfer")
    if given := [name for name, value in others.items() if value is not None]:
        raise BatError(f"--study transfer: {', '.join(given)} cannot be used with it (it chooses its targets and "
                       "their priors, on replayed data)")
    if len(budgets) > 1:
        raise BatError(f"--budgets {','.join(map(str, budgets))}: the transfer study takes one budget")
    plan = plan_transfer(tuners=tuners, benchmarks=benchmarks, budget=budgets[0] if budgets else None,
                         repeats=repeats, seed=seed, tuner_charge_s=tuner_charge, isolate=isolate)
    if scheduler:
        _check_scheduler(scheduler)
    chosen = figure_format_list(formats)
    out = check_output_folder(out, what="--out")
    with FolderLock(out, "--out"), progress("runs") as moved, figure_formats(chosen):
        done, result = run_transfer(plan, out, workers=workers, scheduler=scheduler,
                                    progress=lambda k, n: moved(k, n))
        paths = write_outputs(out, result, done.records, plots=plots)
    say("{} runs executed, {} reused from {} ({:.1f} s)", done.executed, done.reused, out / "runs.sqlite",
        done.wall_s)
    say("transfer study: {}", "; ".join(f"{split_name(c.prior)}: {len(c.targets)} targets" for c in plan.splits))
    say("report: {}; numbers: {}", paths["summary"], paths["json"])
    summary = result.summary()
    scores: dict[str, dict[str, Any]] = {}
    for label, e in summary.items():
        m = e.get("methodology_evaluations") or {"score": None}
        scores[label] = {"score": m["score"], **{k: e[k] for k in ("methodology_evaluations", "methodology_time")
                                                 if k in e}}
        say("  {}: mean median evaluations to 1.10 {}, to 1.05 {} (all other GPUs as the prior; >{} censored)",
            label, _mean(e["mean_median_to_1.10"]), _mean(e["mean_median_to_1.05"]), plan.budget)
    document({"executed": done.executed, "reused": done.reused, "wall_s": done.wall_s,
              "outputs": {k: str(v) for k, v in paths.items()}, "data_flags": [], "scores": scores, "gate": None,
              "transfer": {"budget": plan.budget, "splits": [c.prior for c in plan.splits], "summary": summary,
                           "rows": [{k: r[k] for k in ("split", "benchmark", "gpu", "label", "goal", "median",
                                                       "ci_low", "ci_high", "censored", "runs",
                                                       "random_exact_median", "gain")} for r in result.rows]}})


def _mean(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}"


def _check_scheduler(address: str) -> None:
    """Connect to the Dask scheduler once, so a wrong address fails before anything is written."""
    from bat.core.errors import BackendError, MissingDependencyError

    try:
        from distributed import Client
    except ImportError as exc:
        raise MissingDependencyError("--scheduler needs dask[distributed] (the 'dask' extra: "
                                     "pip install 'bat-autotune[dask]')") from exc
    try:
        with Client(address, timeout=SCHEDULER_TIMEOUT_S):
            pass
    except (OSError, ValueError) as exc:
        raise BackendError(f"--scheduler {address}: cannot connect ({exc})") from None


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)
