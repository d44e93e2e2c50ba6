"""``bat check``: the data checks of ``bat.data.checks`` on datasets; exit status 3 when one is flagged."""

from __future__ import annotations

from pathlib import Path

import typer

from bat.cli.output import EXIT_FOUND, document, say


def check(
    datasets: list[str] = typer.Argument(None, help="Dataset files (.parquet), benchmark names (all their GPUs) "
                                                    "or BENCHMARK/GPU; every registered dataset when omitted."),
    benchmark: list[str] = typer.Option(None, "--benchmark", "-b",
                                        help="The same as a positional DATASETS item (repeatable)."),
    gpus: list[str] = typer.Option(None, "--gpus", "--gpu", "-g",
                                   help="Only the datasets of these GPUs, repeated or comma-separated."),
) -> None:
    """Check datasets for errors that would mislead an analysis (scale across GPUs, repeats, statuses, space);
    datasets of one space and GPU recorded by different frameworks are compared with each other."""
    from bat.analysis.frameworks import pairs_across_frameworks
    from bat.core.dataset import Dataset
    from bat.core.errors import DatasetError
    from bat.data.checks import check_dataset, merge_peers, peers_of, registry_peers
    from bat.registry import dataset_entries, find_dataset

    datasets = [*(datasets or []), *(benchmark or [])]
    paths: list[Path] = []
    for item in datasets:
        if item.endswith(".parquet") or Path(item).is_file():
            paths.append(Path(item))
        elif "/" in item:
            bench, gpu = item.split("/", 1)
            paths.append(find_dataset(bench, gpu).path)
        else:
            entries = [e for e in dataset_entries() if e.meta.benchmark == item]
            if not entries:
                find_dataset(item)  # raises the error that lists the benchmarks with data
            paths.extend(e.path for e in entries)
    if not datasets:
        paths = [e.path for e in dataset_entries()]
    chosen = [(str(p), Dataset.load(p, as_recorded=True)) for p in paths]
    wanted = {g.strip() for item in gpus or [] for g in item.split(",") if g.strip()}
    if wanted:
        unknown = wanted - {ds.meta.gpu for _, ds in chosen}
        if unknown:
            raise DatasetError(f"--gpus {', '.join(sorted(unknown))}: no such GPU among the datasets checked")
        chosen = [(p, ds) for p, ds in chosen if ds.meta.gpu in wanted]
    loaded = [ds for _, ds in chosen]
    flagged = 0
    peers: dict[str, list] = {}
    found = []
    for ds in loaded:
        bench = ds.meta.benchmark
        if bench not in peers:
            peers[bench] = registry_peers(bench)
        given = peers_of(d for d in loaded if d.meta.benchmark == bench)
        result = check_dataset(ds, peers=merge_peers(given, peers[bench]))
        flagged += result.flagged
        found.append(result.to_dict())
        say("[bold red]{}[/]" if result.flagged else "[green]{}[/]", result.summary())
    say("{} datasets checked, {} flagged", len(loaded), flagged)
    compared = pairs_across_frameworks(chosen)
    for comparison in compared:
        for line in comparison.lines():
            say("{}", line)
    document({"checked": len(loaded), "flagged": flagged, "datasets": found,
              "frameworks": [c.to_dict() for c in compared]})
    if flagged:
        raise typer.Exit(EXIT_FOUND)


def register(app: typer.Typer) -> None:
    app.command("check")(check)
