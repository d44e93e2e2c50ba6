"""``bat analyze``: every analysis of METHODS.md on recorded datasets, as a report (Markdown, figures, JSON)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from bat.cli.options import MAX_ITERATIONS, MAX_REPEATS, MAX_SEED, open_unit
from bat.cli.output import document, progress, say

if TYPE_CHECKING:
    from bat.analysis.report import AnalyzeSettings


def figure_format_list(text: str) -> list[str]:
    """``--format``: comma-separated figure formats, checked before any work."""
    from bat.analysis.plots import FORMATS

    chosen = [f.strip().lower() for f in text.split(",") if f.strip()]
    if not chosen or any(f not in FORMATS for f in chosen):
        raise typer.BadParameter(f"expected a comma-separated list of {', '.join(FORMATS)}, got {text!r}",
                                 param_hint="--format")
    return chosen


def analyze(
    benchmark: list[str] = typer.Option(None, "--benchmark", "-b",
                                        help="Benchmark to analyse, by name or space file (repeatable): every "
                                             "dataset recorded on its space."),
    dataset: list[str] = typer.Option(None, "--dataset", "-d",
                                      help="Dataset to analyse, by file or id (repeatable); datasets of one space "
                                           "are analysed together."),
    gpus: list[str] = typer.Option(None, "--gpus", "--gpu", "-g",
                                   help="GPUs to include, repeated or comma-separated (default: every GPU with data)."),
    out: Path = typer.Option(Path("reports"), "--out", "-o", help="Directory for report.md, results.json, figures/."),
    all_: bool = typer.Option(False, "--all", help="Every dataset, grouped by the space it was recorded on."),
    speedup: str = typer.Option("all", "--speedup",
                                help="Speedup definition: all (failed = infinitely slow) or valid."),
    convergence: str = typer.Option("median", "--convergence",
                                    help="Convergence and n90/n95 definition: median (the paper's) or mean; "
                                         "both are in results.json."),
    noise_alpha: float = typer.Option(0.05, "--noise-alpha", min=0.0, max=1.0, callback=open_unit,
                                      help="Level of the test for the noise-aware optimum."),
    variant: str = typer.Option("published", "--centrality", help="Centrality variant: published or valid."),
    neighbourhood: str = typer.Option("adjacent", "--neighbourhood", help="FFG neighbourhood: adjacent or hamming."),
    centrality_rule: str = typer.Option("auto", "--centrality-rule",
                                        help="PageRank stopping rule: auto (the paper's where it gives a value, "
                                             "l1 elsewhere), l1 (residual <= 1e-9) or networkx (the paper's)."),
    no_importance: bool = typer.Option(False, "--no-importance", help="Skip the CatBoost PFI (the slow step)."),
    iterations: int = typer.Option(300, "--iterations", min=1, max=MAX_ITERATIONS,
                                   help="CatBoost iterations per model."),
    repeats: int = typer.Option(3, "--repeats", min=2, max=MAX_REPEATS, help="Shuffles per parameter for PFI."),
    traces: list[Path] = typer.Option(None, "--trace", help="Tuner trace files: convergence curves and the "
                                                           "methodology score of each tuner."),
    seed: int = typer.Option(0, "--seed", "-s", min=0, max=MAX_SEED, help="Seed of the models and shuffles."),
    force: bool = typer.Option(False, "--force", help="Replace the report of an earlier run in --out."),
    formats: str = typer.Option("png,svg", "--format",
                                help="Figure formats, comma-separated: png, svg, pdf (PNG always: the report "
                                     "embeds it)."),
) -> None:
    """Analyse the search space of benchmarks from their recorded data and write a report."""
    from bat.analysis.data import check_traces, group_by_space, load_benchmark_data, load_dataset_data
    from bat.analysis.model import ModelSettings
    from bat.analysis.plots import figure_formats
    from bat.analysis.report import AnalyzeSettings, write_report
    from bat.core.atomic import check_output_folder
    from bat.core.errors import DatasetError
    from bat.core.locking import FolderLock
    from bat.registry import dataset_entries

    chosen = figure_format_list(formats)
    gpus = [g.strip() for item in gpus or [] for g in item.split(",") if g.strip()]
    if all_:
        jobs = group_by_space([e for e in dataset_entries() if not gpus or e.meta.gpu in gpus])
    else:
        jobs = [load_benchmark_data(name, list(gpus) if gpus else None) for name in benchmark or []]
        jobs += load_dataset_data(list(dataset or []))
    if not jobs:
        raise DatasetError("name a benchmark with --benchmark, datasets with --dataset, or pass --all")
    check_traces(list(traces or []), jobs)  # a trace that cannot be read, or of other data, fails before any work
    model = ModelSettings(iterations=iterations)
    _check_data(jobs, model.folds)
    check_output_folder(out, what="--out")
    _check_outputs(out, force)
    settings = AnalyzeSettings(speedup_definition=speedup, convergence_definition=convergence,
                               noise_alpha=noise_alpha, centrality_variant=variant,
                               neighbourhood=neighbourhood, centrality_rule=centrality_rule,
                               importance=not no_importance,
                               pfi_repeats=repeats, model=model,
                               trace_paths=list(traces or []), seed=seed)
    with FolderLock(out, "--out"):  # two analyses never write one folder
        _check_outputs(out, force)  # again: another analysis may have finished meanwhile
        with figure_formats(chosen):
            results = _analyze_all(jobs, settings, out)
            report = write_report(results, settings, out)
    _summarize(results, report, speedup, convergence, out)


def _check_data(jobs: list, folds: int) -> None:
    """Every dataset gives the analyses something to measure, checked before the folder is made: a valid
    measurement of more than one time (the score's baseline), and as many as the models' folds (a dataset of
    one row wrote figures, then ended in scikit-learn's refusal)."""
    from bat.analysis.score import target_baseline
    from bat.core.errors import DatasetError

    for data in jobs:
        for dataset in data.datasets.values():
            target_baseline(dataset, data.space)
            if len(dataset.ok) < folds:
                raise DatasetError(f"dataset {dataset.name}: {len(dataset.ok)} valid measurements; the analysis's "
                                   f"models need at least {folds}")


def _analyze_all(jobs: list, settings: AnalyzeSettings, out: Path) -> list[dict]:
    from bat.analysis.report import analyze_benchmark

    results = []
    for data in jobs:
        with progress(f"analyze {data.benchmark}", 1.0) as moved:
            results.append(analyze_benchmark(data, settings, out / "figures",
                                             lambda what, fraction: moved(fraction, phase=what)))
    return results


def _summarize(results: list[dict], report: Path, speedup: str, convergence: str, out: Path) -> None:
    summaries = []
    for r in results:
        values = r["speedup"]["values"]
        say("{}: max speedup over median ({}) {}", r["benchmark"], speedup,
            ", ".join(f"{g} {v[speedup]['value']:.3f}" for g, v in values.items()))
        reach = {g: c["evaluations_to_reach"][convergence] for g, c in r["convergence"].items()}
        say("{}: random search n90/n95 ({}) {}", r["benchmark"], convergence,
            ", ".join(f"{g} {v['90']}/{v['95']}" for g, v in reach.items()))
        flagged = {}
        for g in r["flagged"]:
            flagged[g] = [f["message"] for f in r["data_checks"][g]["findings"] if f["flagged"]]
            say("[yellow]data check flagged {}/{}:[/] {}", r["benchmark"], g, "; ".join(flagged[g]))
        summaries.append({"benchmark": r["benchmark"],
                          "max_speedup_over_median": {g: v[speedup]["value"] for g, v in values.items()},
                          "random_search_n90_n95": {g: [v["90"], v["95"]] for g, v in reach.items()},
                          "flagged": flagged})
    bad = [c for r in results for c in r["checks"] if not c["matches"]]
    for c in bad:
        say("[yellow]does not match the published value:[/] {}: published {}, ours {}", c["what"], c["published"],
            c["ours"])
    say("report: {}", report)
    document({"report": str(report), "results": str(out / "results.json"), "speedup_definition": speedup,
              "convergence_definition": convergence, "benchmarks": summaries,
              "published_mismatches": [{"what": c["what"], "published": c["published"], "ours": c["ours"]}
                                       for c in bad]})


def _check_outputs(out: Path, force: bool) -> None:
    from bat.core.atomic import check_output

    for name in ("report.md", "results.json"):
        check_output(out / name, overwrite=force, what="--out")


def register(app: typer.Typer) -> None:
    app.command("analyze")(analyze)
