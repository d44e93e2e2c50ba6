"""``bat list``: benchmarks, tuners, backends, datasets and GPUs, read from the registries.

Each kind is first a list of plain records (what ``--json`` prints), then a table of them; every
cell from a registry or a dataset goes through ``bat.cli.output.cell`` (one line, no markup).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from enum import StrEnum
from functools import cache
from typing import Any

import typer
from rich.table import Table

from bat.cli.output import cell, document, markup

Records = list[dict[str, Any]]


class What(StrEnum):
    all = "all"
    benchmarks = "benchmarks"
    tuners = "tuners"
    backends = "backends"
    datasets = "datasets"
    gpus = "gpus"


def list_(what: What = typer.Argument(What.all, help="What to list."),
          options: bool = typer.Option(False, "--options", help="With tuners: each tuner's hyper-parameters "
                                                                "(what -O KEY=VALUE accepts), with ranges.")
          ) -> None:
    """List benchmarks, tuners, backends, datasets and GPUs."""
    from bat.cli.console import console

    if options:
        if what is not What.tuners:
            raise typer.BadParameter("--options goes with `bat list tuners`", param_hint="--options")
        records = tuner_options_records()
        console.print(tuner_options_table(records))
        document({"tuner_options": records})
        return
    found: dict[str, Records] = {}
    _dataset_entries.cache_clear()  # read once per command: the data folder may have changed since the last
    for kind, (rows_of, table) in TABLES.items():
        if what in (What.all, kind):
            found[kind.value] = rows_of()
            console.print(table(found[kind.value]))
    document(found)


def benchmarks_records() -> Records:
    from bat.core.catalogue import benchmark_description, benchmark_names

    return [{"name": name, "description": benchmark_description(name)} for name in benchmark_names()]


def benchmarks_table(records: Records) -> Table:
    t = Table("name", "description", title="benchmarks")
    for r in records:
        t.add_row(cell(r["name"]), cell(r["description"]))
    return t


def tuners_records() -> Records:
    from bat.registry import scheme_names, scheme_summary, tuner_entry, tuner_names

    return ([{"name": name, "summary": tuner_entry(name).summary, "oracle": tuner_entry(name).oracle}
             for name in tuner_names()]
            + [{"name": f"{scheme}:...", "summary": scheme_summary(scheme), "oracle": False}
               for scheme in scheme_names()])


def tuners_table(records: Records) -> Table:
    t = Table("name", "what it is", title="tuners",
              caption=markup("{}: reads the target's measurements, which no real tuner has; bat compare includes "
                             "it only with --oracles", "[oracle]"))
    for r in records:
        t.add_row(cell(r["name"] + (" [oracle]" if r["oracle"] else "")), cell(r["summary"]))
    return t


def tuner_options_records() -> Records:
    """Every registered tuner's declared hyper-parameters (``declared`` False: every dataclass field is accepted)."""
    from bat.core.errors import BatError
    from bat.registry import tuner_class, tuner_names

    out: Records = []
    for name in tuner_names():
        try:
            cls, variant = tuner_class(name)
        except BatError as exc:  # a library that is not installed: said, not fatal
            out.append({"tuner": name, "declared": False, "error": str(exc), "options": []})
            continue
        params = cls.hyperparameters(variant)
        out.append({"tuner": name, "declared": params is not None,
                    "options": [{"name": p.name, "range": p.describe(), "doc": p.doc} for p in params or ()]})
    return out


def tuner_options_table(records: Records) -> Table:
    """Name, type and range, default, meaning of each declared hyper-parameter."""
    t = Table(title="tuner hyper-parameters (-O KEY=VALUE)")
    t.add_column("tuner", no_wrap=True)
    t.add_column("option", no_wrap=True)
    t.add_column("type, range, default")
    t.add_column("what it does")
    for r in records:
        if "error" in r:
            t.add_row(cell(r["tuner"]), "", cell(f"(not loaded: {r['error']})"), "")
        elif not r["declared"]:
            t.add_row(cell(r["tuner"]), "", "(undeclared: every dataclass field)", "")
        elif not r["options"]:
            t.add_row(cell(r["tuner"]), "", "(none)", "")
        for p in r["options"]:
            t.add_row(cell(r["tuner"]), cell(p["name"]), cell(p["range"]), cell(p["doc"]))
    return t


def backends_records() -> Records:
    from bat.registry import backend_names

    return [{"name": name} for name in backend_names()]


def backends_table(records: Records) -> Table:
    t = Table("name", title="backends (--backend; auto picks one)")
    for r in records:
        t.add_row(cell(r["name"]))
    return t


@cache
def _dataset_entries() -> list[Any]:
    """Every dataset's entry, each Parquet footer read once for both tables of ``bat list`` (datasets, GPUs)."""
    from bat.registry import dataset_entries

    return dataset_entries()


def datasets_records() -> Records:
    from bat.cli.console import shown_path
    from bat.core.quarantine import count

    entries = _dataset_entries()
    keys = Counter(e.key for e in entries)
    return [{"id": e.id, "path": shown_path(e.path), "benchmark": e.meta.benchmark, "gpu": e.meta.gpu,
             "gpu_name": e.meta.gpu_name, "rows": e.meta.n_expected, "partial": bool(e.meta.partial),
             "duplicate": keys[e.key] > 1, "source": e.meta.source, "quarantined": count(e.meta.extra)}
            for e in entries]


def datasets_table(records: Records) -> Table:
    from bat.cli.console import shown_path
    from bat.registry import dataset_roots

    roots = "; ".join(f"{label}: {shown_path(root)}" for label, root in dataset_roots())
    t = Table(title=markup("datasets ({}); choose one with --dataset ID", roots), title_justify="left")
    t.add_column("id", overflow="fold")
    t.add_column("benchmark", overflow="fold")
    t.add_column("gpu", overflow="fold")
    t.add_column("rows", justify="right", no_wrap=True)
    t.add_column("source", overflow="fold")
    t.add_column("path", overflow="fold")
    for r in records:
        gpu = r["gpu"] + (" (partial)" if r["partial"] else "") + (" (2+ datasets)" if r["duplicate"] else "")
        rows = f"{r['rows']:,}" if r["rows"] is not None else "?"
        if r["quarantined"]:
            rows += markup(" [bold yellow]({:,} quarantined)[/]", r["quarantined"])
        t.add_row(cell(r["id"]), cell(r["benchmark"]), cell(gpu), rows, cell(r["source"]),
                  f"[dim]{cell(r['path'])}[/]")
    return t


def gpus_records() -> Records:
    gpus: dict[str, tuple[str, list[str]]] = {}
    for e in _dataset_entries():
        _, benches = gpus.setdefault(e.meta.gpu, (e.meta.gpu_name, []))
        benches.append(e.meta.benchmark)
    return [{"gpu": gpu, "name": name, "benchmarks": benches} for gpu, (name, benches) in sorted(gpus.items())]


def gpus_table(records: Records) -> Table:
    from bat.registry import DEFAULT_GPU

    t = Table("gpu", "name", "benchmarks", title=f"GPUs with recorded data (default for replay: {DEFAULT_GPU})")
    for r in records:
        t.add_row(cell(r["gpu"]), cell(r["name"]), cell(", ".join(r["benchmarks"])))
    return t


TABLES: dict[What, tuple[Callable[[], Records], Callable[[Records], Table]]] = {
    What.benchmarks: (benchmarks_records, benchmarks_table), What.tuners: (tuners_records, tuners_table),
    What.backends: (backends_records, backends_table), What.datasets: (datasets_records, datasets_table),
    What.gpus: (gpus_records, gpus_table)}


def register(app: typer.Typer) -> None:
    app.command("list")(list_)
