"""Where a recording goes: the default dataset file, never replacing a dataset unless asked, resume checks."""

from __future__ import annotations

from pathlib import Path

from bat.core.atomic import check_output
from bat.core.benchmark import Benchmark
from bat.core.errors import DatasetError
from bat.core.userdata import data_dir, dataset_file
from bat.registry import datasets_of


def journal_of(out: Path) -> Path:
    """The journal beside a recording's dataset file."""
    return out.with_name(out.name + ".journal.jsonl")


def check_out(out: Path, *, resume: bool, force: bool) -> Path:
    """A new recording never replaces a dataset unless forced; a resumed one continues its own."""
    check_output(out, overwrite=resume or force, what="--out")
    if resume and not journal_of(out).exists() and not out.exists():
        raise DatasetError(f"--resume: neither a journal {journal_of(out)} nor a dataset {out} to resume; "
                           "leave out --resume to start recording")
    return out


def default_out(bench: Benchmark, gpu: str, *, small: bool, resume: bool, force: bool) -> Path:
    """<data folder>/datasets/<bench>_<gpu>.parquet, checked; small sizes go to recorded-small/ (never replayed).

    A second dataset of the same space and GPU is never started by default: give --out for one.
    """
    if small:
        out = dataset_file(bench.name, f"{gpu}_small", folder=data_dir() / "recorded-small",
                           fields=("benchmark", "--gpu-name"))
        return check_out(out, resume=resume, force=force)
    out = dataset_file(bench.name, gpu, fields=("benchmark", "--gpu-name"))
    others = [e for e in datasets_of(bench) if e.meta.gpu == gpu and e.path.resolve() != out.resolve()]
    if others and not resume:
        raise DatasetError(f"a dataset of {bench.name} on {gpu} exists at {others[0].path}; give --out FILE to "
                           "record another one (then choose between them with --dataset)")
    return check_out(out, resume=resume, force=force)
