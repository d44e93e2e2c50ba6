"""``bat check``: the data checks of ``bat.analysis.checks`` on datasets; exit status 3 when one is flagged."""

from __future__ import annotations

from pathlib import Path

import typer

from bat.cli.output import EXIT_FOUND, document, say


def check(
    datasets: list[str] = typer.Argument(None, help="Dataset files (.parquet), benchmark names (all their GPUs) "
                                                    "or BENCHMARK/GPU; every registered dataset when omitted."),
    benchmark: list[str] = typer.Option(None, "--benchmark", "-b",
                                        help="The same as a positional DATASETS item (repeatable)."),
) -> None:
    """Check datasets for errors that would mislead an analysis (scale across GPUs, repeats, statuses, space)."""
    from bat.analysis.checks import check_dataset, merge_peers, peers_of, registry_peers
    from bat.core.dataset import Dataset
    from bat.registry import dataset_entries, find_dataset

    datasets = [*(datasets or []), *(benchmark or [])]
    loaded: list[Dataset] = []
    for item in datasets:
        if item.endswith(".parquet") or Path(item).is_file():
            loaded.append(Dataset.load(item, as_recorded=True))
        elif "/" in item:
            bench, gpu = item.split("/", 1)
            loaded.append(Dataset.load(find_dataset(bench, gpu).path, as_recorded=True))
        else:
            entries = [e for e in dataset_entries() if e.meta.benchmark == item]
            if not entries:
                find_dataset(item)  # raises the error that lists the benchmarks with data
            loaded.extend(Dataset.load(e.path, as_recorded=True) for e in entries)
    if not datasets:
        loaded = [Dataset.load(e.path, as_recorded=True) for e in dataset_entries()]
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
    document({"checked": len(loaded), "flagged": flagged, "datasets": found})
    if flagged:
        raise typer.Exit(EXIT_FOUND)


def register(app: typer.Typer) -> None:
    app.command("check")(check)
