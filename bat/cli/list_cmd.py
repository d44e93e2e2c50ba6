"""``bat list``: benchmarks, tuners, datasets and GPUs, read from the registries."""

from __future__ import annotations

from collections import Counter
from enum import StrEnum

import typer
from rich.table import Table


class What(StrEnum):
    all = "all"
    benchmarks = "benchmarks"
    tuners = "tuners"
    backends = "backends"
    datasets = "datasets"
    gpus = "gpus"


def list_(what: What = typer.Argument(What.all, help="What to list.")) -> None:
    """List benchmarks, tuners, datasets and GPUs."""
    from bat.cli.console import console, shown_path
    from bat.core.benchmark import benchmark_names, benchmark_path
    from bat.core.spacefile import read_space_json
    from bat.registry import (
        DEFAULT_GPU,
        backend_names,
        dataset_entries,
        dataset_roots,
        scheme_names,
        scheme_summary,
        tuner_entry,
        tuner_names,
    )

    if what in (What.all, What.benchmarks):
        t = Table(title="benchmarks")
        t.add_column("name")
        t.add_column("description")
        for name in benchmark_names():
            t.add_row(name, read_space_json(benchmark_path(name)).get("description", ""))  # no space is built
        console.print(t)
    if what in (What.all, What.tuners):
        t = Table(title="tuners")
        t.add_column("name")
        t.add_column("what it is")
        for name in tuner_names():
            e = tuner_entry(name)
            t.add_row(name, e.summary)
        for scheme in scheme_names():
            t.add_row(f"{scheme}:...", scheme_summary(scheme))
        console.print(t)
    if what in (What.all, What.backends):
        t = Table(title="backends (--backend; auto picks one)")
        t.add_column("name")
        for name in backend_names():
            t.add_row(name)
        console.print(t)
    entries = dataset_entries()
    if what in (What.all, What.datasets):
        roots = "; ".join(f"{label}: {shown_path(root)}" for label, root in dataset_roots())
        t = Table(title=f"datasets ({roots}); choose one with --dataset ID", title_justify="left")
        t.add_column("id / path", overflow="fold", ratio=3)
        t.add_column("benchmark", overflow="fold", ratio=1)
        t.add_column("gpu", overflow="fold", ratio=1)
        t.add_column("rows", justify="right", no_wrap=True)
        t.add_column("source", overflow="fold", ratio=2)
        keys = Counter(e.key for e in entries)
        for e in entries:
            m = e.meta
            rows = f"{m.n_expected:,}" if m.n_expected is not None else "?"
            gpu = m.gpu + (" (partial)" if m.partial else "") + (" (2+ datasets)" if keys[e.key] > 1 else "")
            t.add_row(f"{e.id}\n[dim]{shown_path(e.path)}[/]", m.benchmark, gpu, rows, m.source)
        console.print(t)
    if what in (What.all, What.gpus):
        t = Table(title=f"GPUs with recorded data (default for replay: {DEFAULT_GPU})")
        t.add_column("gpu")
        t.add_column("name")
        t.add_column("benchmarks")
        gpus: dict[str, tuple[str, list[str]]] = {}
        for e in entries:
            name, benches = gpus.setdefault(e.meta.gpu, (e.meta.gpu_name, []))
            benches.append(e.meta.benchmark)
        for gpu, (name, benches) in sorted(gpus.items()):
            t.add_row(gpu, name, ", ".join(benches))
        console.print(t)


def register(app: typer.Typer) -> None:
    app.command("list")(list_)
