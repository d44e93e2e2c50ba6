"""``bat list``: benchmarks, tuners, backends, datasets and GPUs, read from the registries."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from enum import StrEnum

import typer
from rich.markup import escape
from rich.table import Table


class What(StrEnum):
    all = "all"
    benchmarks = "benchmarks"
    tuners = "tuners"
    backends = "backends"
    datasets = "datasets"
    gpus = "gpus"


def list_(what: What = typer.Argument(What.all, help="What to list.")) -> None:
    """List benchmarks, tuners, backends, datasets and GPUs."""
    from bat.cli.console import console

    for kind, table in TABLES.items():
        if what in (What.all, kind):
            console.print(table())


def benchmarks_table() -> Table:
    from bat.core.benchmark import benchmark_names, benchmark_path
    from bat.core.spacefile import read_space_json

    t = Table("name", "description", title="benchmarks")
    for name in benchmark_names():
        t.add_row(name, escape(read_space_json(benchmark_path(name)).get("description", "")))  # no space is built
    return t


def tuners_table() -> Table:
    from bat.registry import scheme_names, scheme_summary, tuner_entry, tuner_names

    t = Table("name", "what it is", title="tuners",
              caption=escape("[oracle]: reads the target's measurements, which no real tuner has; "
                             "bat compare includes it only with --oracles"))
    for name in tuner_names():
        entry = tuner_entry(name)
        t.add_row(escape(name + (" [oracle]" if entry.oracle else "")), escape(entry.summary))
    for scheme in scheme_names():
        t.add_row(escape(f"{scheme}:..."), escape(scheme_summary(scheme)))
    return t


def backends_table() -> Table:
    from bat.registry import backend_names

    t = Table("name", title="backends (--backend; auto picks one)")
    for name in backend_names():
        t.add_row(escape(name))
    return t


def datasets_table() -> Table:
    from bat.cli.console import shown_path
    from bat.registry import dataset_entries, dataset_roots

    entries = dataset_entries()
    roots = "; ".join(f"{label}: {shown_path(root)}" for label, root in dataset_roots())
    t = Table(title=escape(f"datasets ({roots}); choose one with --dataset ID"), title_justify="left")
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
        t.add_row(f"{escape(e.id)}\n[dim]{escape(shown_path(e.path))}[/]", escape(m.benchmark), escape(gpu), rows,
                  escape(m.source))
    return t


def gpus_table() -> Table:
    from bat.registry import DEFAULT_GPU, dataset_entries

    t = Table("gpu", "name", "benchmarks", title=f"GPUs with recorded data (default for replay: {DEFAULT_GPU})")
    gpus: dict[str, tuple[str, list[str]]] = {}
    for e in dataset_entries():
        name, benches = gpus.setdefault(e.meta.gpu, (e.meta.gpu_name, []))
        benches.append(e.meta.benchmark)
    for gpu, (name, benches) in sorted(gpus.items()):
        t.add_row(escape(gpu), escape(name), escape(", ".join(benches)))
    return t


TABLES: dict[What, Callable[[], Table]] = {What.benchmarks: benchmarks_table, What.tuners: tuners_table,
                                           What.backends: backends_table, What.datasets: datasets_table,
                                           What.gpus: gpus_table}


def register(app: typer.Typer) -> None:
    app.command("list")(list_)
