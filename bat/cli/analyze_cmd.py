"""``bat analyze``: every analysis of METHODS.md on recorded datasets, as a report (Markdown, figures, JSON)."""

from __future__ import annotations

from pathlib import Path

import typer


def analyze(
    benchmark: list[str] = typer.Option(None, "--benchmark", "-b",
                                        help="Benchmark to analyse, by name or space file (repeatable): every "
                                             "dataset recorded on its space."),
    dataset: list[str] = typer.Option(None, "--dataset", "-d",
                                      help="Dataset to analyse, by file or id (repeatable); datasets of one space "
                                           "are analysed together."),
    gpus: list[str] = typer.Option(None, "--gpus", "-g", help="GPUs to include (default: every GPU with data)."),
    out: Path = typer.Option(Path("reports"), "--out", "-o", help="Directory for report.md, results.json, figures/."),
    all_: bool = typer.Option(False, "--all", help="Every dataset, grouped by the space it was recorded on."),
    speedup: str = typer.Option("all", "--speedup",
                                help="Speedup definition: all (failed = infinitely slow) or valid."),
    convergence: str = typer.Option("median", "--convergence",
                                    help="Convergence and n90/n95 definition: median (the paper's) or mean; "
                                         "both are in results.json."),
    noise_alpha: float = typer.Option(0.05, "--noise-alpha", min=0.0, max=1.0,
                                      help="Level of the test for the noise-aware optimum."),
    variant: str = typer.Option("published", "--centrality", help="Centrality variant: published or valid."),
    neighbourhood: str = typer.Option("adjacent", "--neighbourhood", help="FFG neighbourhood: adjacent or hamming."),
    centrality_rule: str = typer.Option("auto", "--centrality-rule",
                                        help="PageRank stopping rule: auto (the paper's where it gives a value, "
                                             "l1 elsewhere), l1 (residual <= 1e-9) or networkx (the paper's)."),
    no_importance: bool = typer.Option(False, "--no-importance", help="Skip the CatBoost PFI (the slow step)."),
    iterations: int = typer.Option(300, "--iterations", min=1, help="CatBoost iterations per model."),
    repeats: int = typer.Option(3, "--repeats", min=2, help="Shuffles per parameter for PFI."),
    traces: list[Path] = typer.Option(None, "--trace", help="Tuner trace files: convergence curves and the "
                                                           "methodology score of each tuner."),
    seed: int = typer.Option(0, "--seed", "-s", min=0, help="Seed of the models and shuffles."),
    force: bool = typer.Option(False, "--force", help="Replace the report of an earlier run in --out."),
) -> None:
    """Analyse the search space of benchmarks from their recorded data and write a report."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from bat.analysis.data import check_traces, group_by_space, load_benchmark_data, load_dataset_data
    from bat.analysis.model import ModelSettings
    from bat.analysis.report import AnalyzeSettings, analyze_benchmark, write_report
    from bat.cli.console import console
    from bat.core.atomic import check_output_folder
    from bat.core.errors import DatasetError
    from bat.core.locking import FolderLock
    from bat.registry import dataset_entries

    if all_:
        jobs = group_by_space([e for e in dataset_entries() if not gpus or e.meta.gpu in gpus])
    else:
        jobs = [load_benchmark_data(name, list(gpus) if gpus else None) for name in benchmark or []]
        jobs += load_dataset_data(list(dataset or []))
    if not jobs:
        raise DatasetError("name a benchmark with --benchmark, datasets with --dataset, or pass --all")
    check_traces(list(traces or []), jobs)  # a trace that cannot be read, or of other data, fails before any work
    check_output_folder(out, what="--out")
    _check_outputs(out, force)
    settings = AnalyzeSettings(speedup_definition=speedup, convergence_definition=convergence,
                               noise_alpha=noise_alpha, centrality_variant=variant,
                               neighbourhood=neighbourhood, centrality_rule=centrality_rule,
                               importance=not no_importance,
                               pfi_repeats=repeats, model=ModelSettings(iterations=iterations),
                               trace_paths=list(traces or []), seed=seed)
    with FolderLock(out, "--out"):  # two analyses never write one folder
        _check_outputs(out, force)  # again: another analysis may have finished meanwhile
        results = []
        with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                      TextColumn("{task.percentage:>3.0f}%"), TimeElapsedColumn(),
                      console=console, transient=True) as bar:
            for data in jobs:
                name = data.benchmark
                task = bar.add_task(name, total=1.0)

                def step(what: str, fraction: float, task=task, name=name) -> None:
                    bar.update(task, description=f"{name}: {what}", completed=fraction)

                results.append(analyze_benchmark(data, settings, out / "figures", step))
                bar.update(task, completed=1.0)
        report = write_report(results, settings, out)
    for r in results:
        values = r["speedup"]["values"]
        console.print(f"{r['benchmark']}: max speedup over median ({speedup}) "
                      + ", ".join(f"{g} {v[speedup]['value']:.3f}" for g, v in values.items()),
                      highlight=False)
        reach = {g: c["evaluations_to_reach"][convergence] for g, c in r["convergence"].items()}
        console.print(f"{r['benchmark']}: random search n90/n95 ({convergence}) "
                      + ", ".join(f"{g} {v['90']}/{v['95']}" for g, v in reach.items()), highlight=False)
        for g in r["flagged"]:
            reasons = "; ".join(f["message"] for f in r["data_checks"][g]["findings"] if f["flagged"])
            console.print(f"[yellow]data check flagged {r['benchmark']}/{g}:[/] {reasons}", highlight=False)
    bad = [c for r in results for c in r["checks"] if not c["matches"]]
    for c in bad:
        console.print(f"[yellow]does not match the published value:[/] {c['what']}: "
                      f"published {c['published']}, ours {c['ours']}", highlight=False)
    console.print(f"report: {report}")


def _check_outputs(out: Path, force: bool) -> None:
    from bat.core.atomic import check_output

    for name in ("report.md", "results.json"):
        check_output(out / name, overwrite=force, what="--out")


def register(app: typer.Typer) -> None:
    app.command("analyze")(analyze)
