"""``bat import`` and ``bat export``: other tools' formats to datasets and back."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

import typer


class Format(StrEnum):
    kernel_tuner = "kernel_tuner"
    t4 = "t4"


def import_(
    file: Path = typer.Argument(..., help="Kernel Tuner cache (.json/.json.gz), T4 or KTT JSON."),
    benchmark: str = typer.Option(None, "--benchmark", "-b", help="Benchmark it belongs to (default: by parameters)."),
    gpu: str = typer.Option(None, "--gpu", help="Short GPU id (default: from the file's device name)."),
    out: Path = typer.Option(None, "--out", "-o",
                             help="Dataset file (default results/imported/<bench>_<gpu>.parquet)."),
    source: str = typer.Option("", "--source", help="Where the data comes from (kept as provenance)."),
    licence: str = typer.Option("", "--licence", help="The data's licence notice."),
    notes: str = typer.Option("", "--notes", help="Anything a user of the data should know."),
) -> None:
    """Import measured data as a dataset (Parquet), checked against its space."""
    from bat.cli.console import console
    from bat.importers import import_file, space_dict
    from bat.registry import results_dir

    imp = import_file(file, benchmark=benchmark, gpu=gpu, source=source, licence=licence)
    ds = imp.dataset
    out = out or results_dir() / "imported" / f"{ds.meta.benchmark}_{ds.meta.gpu}.parquet"
    ds.meta.n_expected = len(ds.frame)
    ds.meta.notes = notes or ds.meta.notes
    ds.save(out)
    kind = f"benchmark {imp.benchmark.name}" if imp.benchmark else "a space inferred from the file"
    console.print(f"imported {len(ds.frame)} rows ({imp.format}) of {kind} on {ds.meta.gpu} -> {out}")
    counts = ds.frame["status"].value_counts().to_dict()
    console.print("statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if imp.n_constraint_violations:
        console.print(f"warning: {imp.n_constraint_violations} rows violate the space's constraints")
    if imp.benchmark is None:
        space_path = out.with_suffix(".space.json")
        space_path.write_text(json.dumps(space_dict(imp.space), indent=2) + "\n")
        console.print(f"inferred space written to {space_path}")


def export(
    dataset: Path = typer.Argument(..., help="Dataset file (.parquet)."),
    to: Format = typer.Option(..., "--to", help="Target format."),
    out: Path = typer.Option(..., "--out", "-o", help="Output file (.json or .json.gz)."),
) -> None:
    """Export a dataset to a Kernel Tuner cache or the T4 results format."""
    from bat.cli.console import console
    from bat.dataset import Dataset
    from bat.importers.kerneltuner import write_cache
    from bat.importers.t4 import write_t4

    ds = Dataset.load(dataset)
    (write_cache if to is Format.kernel_tuner else write_t4)(ds, out)
    console.print(f"wrote {len(ds.frame)} rows of {ds.name} as {to.value} to {out}")


def register(app: typer.Typer) -> None:
    app.command("import")(import_)
    app.command("export")(export)
