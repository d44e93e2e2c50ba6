"""``bat import`` and ``bat export``: other tools' formats to datasets and back, into the user's data folder."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from bat.cli.output import document, say, warn
from bat.core.atomic import check_output, write_text
from bat.core.errors import DatasetError

if TYPE_CHECKING:
    from bat.formats.importing import Imported


class Format(StrEnum):
    kernel_tuner = "kernel_tuner"
    t4 = "t4"
    ktt = "ktt"
    t1 = "t1"


def import_(
    file: Path = typer.Argument(..., help="Kernel Tuner cache (.json/.json.gz), T4 or KTT JSON; a folder in the "
                                          "FAIR Benchmark Hub's layout (<kernel>/<GPU>.json.gz: one dataset per "
                                          "file, the GPU from the file name); or a T1 space file alone."),
    benchmark: str = typer.Option(None, "--benchmark", "-b",
                                  help="The space the data belongs to: a benchmark name or a space file (ours or "
                                       "T1) by path; or a new benchmark's name. Default: the benchmark whose "
                                       "parameters and values hold the file's, else a space inferred from it, "
                                       "named after the file."),
    gpu: str = typer.Option(None, "--gpu", help="GPU id (default: from the file's device name)."),
    out: Path = typer.Option(None, "--out", "-o",
                             help="Dataset file (default <data folder>/datasets/<bench>_<gpu>.parquet); for a "
                                  "folder, the folder for its <bench>_<gpu>.parquet files."),
    force: bool = typer.Option(False, "--force", help="Replace an existing file at --out."),
    source: str = typer.Option("", "--source", help="Where the data comes from (kept as provenance)."),
    licence: str = typer.Option("", "--licence", help="The data's licence notice."),
    notes: str = typer.Option("", "--notes", help="Anything a user of the data should know."),
    allow_suspect: bool = typer.Option(False, "--allow-suspect", help="Keep rows with impossible times or "
                                       "repeated configurations, quarantined (status missing, column 'suspect'), "
                                       "instead of refusing the file."),
    fix: list[str] = typer.Option([], "--fix", help="NAME=VALUE: a parameter of --benchmark the file lacks (an "
                                  "older version of the space), fixed to VALUE; the dataset is then a slice of the "
                                  "space, marked partial (repeatable)."),
) -> None:
    """Import measured data as a dataset (Parquet), checked against its space; or a T1 file as a space."""
    from bat.cli.console import shown_path
    from bat.core.t1 import is_t1
    from bat.core.userdata import dataset_file
    from bat.formats.importing import import_file
    from bat.formats.kerneltuner import read_json

    fixed = _pairs(fix, "--fix")
    if file.is_dir():
        _import_folder(file, benchmark, out, force, source, licence, notes, allow_suspect, fixed)
        return
    if is_t1(read_json(file)):
        _import_space(file, out, force)
        return
    if out is not None:
        check_output(out, overwrite=force, what="--out")
    imp = import_file(file, benchmark=benchmark, gpu=gpu, source=source, licence=licence,
                      allow_suspect=allow_suspect, fix=fixed)
    for warning in imp.warnings:
        warn("{}", warning)
    ds = imp.dataset
    out = out or dataset_file(ds.meta.benchmark, ds.meta.gpu)
    space_path = _save(imp, out, force, notes)
    if imp.benchmark is None:
        kind = "a space inferred from the file"
    elif ds.meta.space_file:
        kind = f"the space in {imp.benchmark.path}"
    else:
        kind = f"benchmark {imp.benchmark.name}"
    say("imported {} rows ({}) of {}, {}, on {} -> {}", len(ds.frame), imp.format, ds.meta.benchmark, kind,
        ds.meta.gpu, shown_path(out))
    counts = {str(k): int(v) for k, v in ds.frame["status"].value_counts().to_dict().items()}
    say("statuses: {}", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    n_valid = imp.space.count_valid()
    inside = len(ds.frame) - imp.n_constraint_violations
    say("the space has {:,} valid configurations; the file has {:,} of them{}", n_valid, inside,
        " (every one)" if inside == n_valid else "")
    _say_mapping(imp)
    if imp.n_constraint_violations:
        warn("{} rows violate the space's constraints", imp.n_constraint_violations)
    from bat.data.checks import check_dataset, registry_peers

    result = check_dataset(ds, imp.space, peers=registry_peers(ds.meta.benchmark))
    say("[bold red]data checks: {}[/]" if result.flagged else "data checks: {}", result.summary())
    if imp.benchmark is None:
        say("inferred space (kept in the dataset too) written to {}", shown_path(space_path))
    document({"imported": [{"path": str(out), "format": imp.format, "benchmark": ds.meta.benchmark,
                            "gpu": ds.meta.gpu, "rows": len(ds.frame), "statuses": counts, "valid_in_space": n_valid,
                            "in_space": inside, "constraint_violations": imp.n_constraint_violations,
                            "data_check": result.to_dict(),
                            "mapping": imp.mapping.to_dict() if imp.mapping else None}],
              "space_file": str(space_path) if imp.benchmark is None else None, "skipped": [],
              "warnings": [*map(str, imp.warnings)]})


def _save(imp: Imported, out: Path, force: bool, notes: str = "") -> Path:
    """Write an import's dataset to ``out`` (and, for a space inferred from the file, that space beside it as
    ``<name>.space.json``, the path returned); both checked before either is written."""
    from bat.core.userdata import check_writable
    from bat.formats.importing import space_dict

    ds = imp.dataset
    space_path = out.with_name(out.name.removesuffix(".parquet") + ".space.json")
    check_output(check_writable(out), overwrite=force, what="--out")
    if imp.benchmark is None:
        check_output(space_path, overwrite=force, what="the inferred space")
    ds.meta.n_expected = len(ds.frame)
    ds.meta.notes = "; ".join(n for n in (notes, ds.meta.notes) if n) if ds.meta.extra.get("quarantined") \
        else notes or ds.meta.notes
    ds.save(out, overwrite=force)
    if imp.benchmark is None:
        write_text(space_path, json.dumps(space_dict(imp.space), indent=2) + "\n", overwrite=force)
    return space_path


def import_on_the_fly(ref: str, benchmark: str | None) -> Path | None:
    """``bat run --dataset FILE`` of another tool's file (a Kernel Tuner cache, T4, KTT): imported into the data
    folder as ``bat import`` would (said on a line), its dataset's path returned; the same file again reuses that
    import (its sha256 is kept in the dataset). None when ``ref`` is no such file (a dataset, an id)."""
    import hashlib

    from bat.cli.console import shown_path
    from bat.core.dataset import Dataset
    from bat.core.datasetmeta import is_parquet
    from bat.core.limits import MAX_DATA_BYTES, regular_file
    from bat.core.userdata import dataset_file
    from bat.formats.importing import import_file
    from bat.registry import resolve_dataset

    path = Path(ref)
    if not path.is_file() or is_parquet(path):
        return None
    regular_file(path, MAX_DATA_BYTES)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    imp = import_file(path, benchmark=benchmark)
    meta = imp.dataset.meta
    out = dataset_file(meta.benchmark, meta.gpu)
    if out.exists():
        if Dataset.read_meta(out).extra.get("imported_from_sha256") == digest:
            say("{}: imported before from this file ({}); replaying that", path.name, shown_path(out))
            return out
        raise DatasetError(f"--dataset {ref}: a {imp.format} file; importing it would replace {out}, which holds "
                           f"other data: bat import {ref} --out FILE first, then --dataset FILE")
    for warning in imp.warnings:
        warn("{}", warning)
    meta.extra["imported_from_sha256"] = digest
    _save(imp, out, force=False)
    say("{}: a {} file, imported on the fly as bat import does ({} rows of {} on {}) -> {}; "
        "--dataset {} replays it from now on", path.name, imp.format, len(imp.dataset.frame), meta.benchmark,
        meta.gpu, shown_path(out), resolve_dataset(out).id)
    return out


def _say_mapping(imp: Imported) -> None:
    """How the file's parameters became the benchmark's, and the slice a dataset covers."""
    for line in imp.mapping.lines() if imp.mapping else []:
        say("{}", line)
    fixed = imp.dataset.meta.slice
    if fixed:
        say("the slice it covers ({}) has {:,} valid configurations",
            ", ".join(f"{k} = {v!r}" for k, v in fixed.items()), imp.space.sliced(fixed).count_valid())


def _pairs(items: list[str], option: str) -> dict[str, str]:
    """``NAME=VALUE`` items as a dict; a malformed or repeated one is refused naming it."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise DatasetError(f"{option} {item!r}: expected NAME=VALUE")
        if name.strip() in out:
            raise DatasetError(f"{option} {name.strip()}: given twice")
        out[name.strip()] = value.strip()
    return out


def _import_folder(folder: Path, benchmark: str | None, out: Path | None, force: bool, source: str, licence: str,
                   notes: str, allow_suspect: bool = False, fixed: dict[str, str] | None = None) -> None:
    """A folder in the hub's layout: every file read and checked, then one dataset per GPU written."""
    if fixed:
        raise DatasetError("--fix: give one file, not a folder")
    from bat.cli.console import shown_path
    from bat.core.userdata import check_writable, dataset_file
    from bat.formats.folder import import_folder

    result = import_folder(folder, benchmark=benchmark, source=source, licence=licence,
                           allow_suspect=allow_suspect)
    targets = []
    for imp in result.imported:
        meta = imp.dataset.meta
        path = out / f"{meta.benchmark}_{meta.gpu}.parquet" if out else dataset_file(meta.benchmark, meta.gpu)
        if path in targets:
            raise DatasetError(f"{folder}: two files give dataset {path.name} (GPU {meta.gpu})")
        check_output(check_writable(path), overwrite=force, what="--out")
        targets.append(path)
    for warning in result.warnings:
        warn("{}", warning)
    imported = []
    for imp, path in zip(result.imported, targets, strict=True):
        ds = imp.dataset
        ds.meta.n_expected = len(ds.frame)
        ds.meta.notes = "; ".join(n for n in (notes, ds.meta.notes) if n) if ds.meta.extra.get("quarantined") \
        else notes or ds.meta.notes
        ds.save(path, overwrite=force)
        statuses = {str(k): int(v) for k, v in ds.frame["status"].value_counts().to_dict().items()}
        counts = ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
        inside = len(ds.frame) - imp.n_constraint_violations
        say("imported {} rows ({}) of {} on {} ({}; {:,} of the space's {:,} valid configurations) -> {}",
            len(ds.frame), imp.format, ds.meta.benchmark, ds.meta.gpu, counts, inside, imp.space.count_valid(),
            shown_path(path))
        if imp.n_constraint_violations:
            warn("{}: {} rows violate the space's constraints", path.name, imp.n_constraint_violations)
        imported.append({"path": str(path), "format": imp.format, "benchmark": ds.meta.benchmark, "gpu": ds.meta.gpu,
                         "rows": len(ds.frame), "statuses": statuses, "valid_in_space": imp.space.count_valid(),
                         "in_space": inside, "constraint_violations": imp.n_constraint_violations,
                         "data_check": None})
    for line in result.skipped:
        say("skipped {}", line)
    document({"imported": imported, "space_file": None, "skipped": [*map(str, result.skipped)],
              "warnings": [*map(str, result.warnings)]})


def _import_space(file: Path, out: Path | None, force: bool) -> None:
    """A T1 file alone: checked, converted to a space file in the data folder."""
    from bat.cli.console import shown_path
    from bat.core.benchmark import load_benchmark
    from bat.core.userdata import check_writable, safe_name, spaces_dir

    bench = load_benchmark(file)
    out = out or spaces_dir() / f"{safe_name(bench.name, 'T1 file name')}.json"
    check_output(check_writable(out), overwrite=force, what="--out")
    write_text(out, json.dumps(bench.raw, indent=2) + "\n", overwrite=force)
    space = bench.space
    say("T1 space {}: {} parameters, {:,} configurations, {:,} valid under {} constraints -> {}", bench.name,
        len(space.names), space.cardinality, space.count_valid(), len(space.constraints), shown_path(out))
    document({"imported": [], "space_file": str(out), "skipped": [], "warnings": []})


def export(
    source: str = typer.Argument(None, help="Dataset file or id; for --to t1 also a benchmark or space file."),
    to: Format = typer.Option(..., "--to", help="Target format."),
    benchmark: str = typer.Option(None, "--benchmark", "-b", help="The same as SOURCE (--to t1: the space of this "
                                                                  "benchmark)."),
    out: Path = typer.Option(..., "--out", "-o", help="Output file (.json or .json.gz)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing --out file."),
) -> None:
    """Export a dataset to a Kernel Tuner cache, T4 or KTT results; or a space to a T1 file."""
    from bat.core.dataset import Dataset
    from bat.core.t1 import write_t1
    from bat.core.userdata import check_writable
    from bat.formats.kerneltuner import write_cache
    from bat.formats.ktt import write_ktt
    from bat.formats.t4 import write_t4
    from bat.registry import resolve_benchmark, resolve_dataset

    if (source is None) == (benchmark is None):
        raise DatasetError("bat export: give the source once, as SOURCE or as --benchmark")
    source = source or benchmark
    check_output(check_writable(out), overwrite=force, what="--out")
    if to is Format.t1:
        is_data = source.endswith(".parquet") or _is_dataset_id(source)
        if is_data:
            bench = Dataset.load(resolve_dataset(source).path).meta.load_benchmark()
        else:
            bench = resolve_benchmark(source)
        write_t1(bench.raw, bench.directory, out, overwrite=force)
        say("wrote the space of {} ({} parameters, {} constraints) as T1 to {}", bench.name, len(bench.space.names),
            len(bench.space.constraints), out)
        document({"out": str(out), "format": to.value, "source": source, "rows": None})
        return
    ds = Dataset.load(resolve_dataset(source).path)
    writer = {Format.kernel_tuner: write_cache, Format.t4: write_t4, Format.ktt: write_ktt}[to]
    writer(ds, out, overwrite=force)
    say("wrote {} rows of {} as {} to {}", len(ds.frame), ds.name, to.value, out)
    document({"out": str(out), "format": to.value, "source": source, "rows": len(ds.frame)})


def _is_dataset_id(text: str) -> bool:
    from bat.registry import dataset_entries

    return any(e.id == text or e.id.endswith("/" + text) for e in dataset_entries())


def register(app: typer.Typer) -> None:
    app.command("import")(import_)
    app.command("export")(export)
