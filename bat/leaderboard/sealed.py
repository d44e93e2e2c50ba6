"""Sealed runs (``bat compare --sealed``): held-back data from outside BAT's tree, and what every run records.

An organiser keeps its targets in a data folder outside the repository (and
outside the installed package), so no tuner's author has seen them. A sealed
campaign replays every dataset of that folder, runs every tuner isolated, and
adds to ``results.json`` a ``sealed`` section: per target the dataset file's
sha256, per tuner its code digest, and per run the dataset's sha256, the
tuner's code digest, BAT's version, the tuner's options, the seed and the
sha256 of the trace as stored. ``check`` (used by ``bat leaderboard`` and its
``--verify``) re-derives the trace hashes and checks every run against it.

The code digest of a tuner is the sha256 over the source files of the modules
its entry resolves to: the module that defines its class and those of the
class's bases (the standard library's left out), each as ``module sha256``,
one a line, sorted. The library a registered tuner wraps is named with its
installed version beside it.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import inspect
import json
import sys
from pathlib import Path
from typing import Any

from bat.core.errors import BatError
from bat.core.limits import check_kind

FORMAT = "bat-sealed/1"


class SealedError(BatError, ValueError):
    """A sealed campaign that cannot run (a data folder inside BAT's tree, no dataset) or whose record is wrong."""


def source_tree() -> Path:
    """BAT's own tree: the repository a source checkout runs from, else the installed package's folder."""
    package = Path(__file__).resolve().parents[1]
    return package.parent if (package.parent / "pyproject.toml").is_file() else package


def data_files(folder: Path) -> dict[str, Path]:
    """The dataset file of each target (``benchmark/gpu``) in an organiser's ``folder``; SealedError when it is
    no folder, lies inside BAT's tree (or holds it), or holds no dataset."""
    from bat.registry import dataset_entries

    if not folder.is_dir():
        raise SealedError(f"--sealed {folder}: not a folder (give the organiser's folder of held-back datasets)")
    real, tree = folder.resolve(), source_tree()
    if real.is_relative_to(tree) or tree.is_relative_to(real):
        raise SealedError(f"--sealed {folder}: inside BAT's tree ({tree}); held-back data lives outside the "
                          "repository, where no tuner's author has seen it")
    entries = dataset_entries(real)
    if not entries:
        raise SealedError(f"--sealed {folder}: holds no dataset (*.parquet written by bat record or bat import)")
    files: dict[str, Path] = {}
    for e in entries:
        if (other := files.setdefault("/".join(e.key), e.path)) != e.path:
            raise SealedError(f"--sealed {folder}: two datasets of {'/'.join(e.key)} ({other.name}, {e.path.name});"
                              " a sealed campaign has one per target")
    return files


def file_sha256(path: Path) -> str:
    """The sha256 of a regular file, read in blocks (a FIFO or a device is refused: bat.core.limits)."""
    check_kind(path)
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def code_digest(spec: str) -> dict[str, Any]:
    """The code digest of tuner ``spec`` (the module docstring), its modules' digests, and its library."""
    from bat.registry import tuner_class, tuner_entry, tuner_names

    cls, _ = tuner_class(spec)
    modules = {}
    for base in cls.__mro__:
        module = sys.modules.get(base.__module__)
        if module is None or base.__module__.split(".")[0] in sys.stdlib_module_names:
            continue
        file = inspect.getsourcefile(module)
        if file is not None:
            modules[base.__module__] = file_sha256(Path(file))
    lines = "".join(f"{name} {sha}\n" for name, sha in sorted(modules.items()))
    library = tuner_entry(spec).requires if spec in tuner_names() else ""
    try:
        version = importlib.metadata.version(library) if library else None
    except importlib.metadata.PackageNotFoundError:
        version = None
    return {"spec": spec, "code_digest": hashlib.sha256(lines.encode()).hexdigest(), "modules": modules,
            "library": library or None, "library_version": version}


def trace_sha256(trace: dict[str, Any]) -> str:
    """The sha256 of a trace as ``results.json`` stores it (its columns), in canonical JSON."""
    return hashlib.sha256(json.dumps(trace, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def record(doc: dict[str, Any], folder: Path, datasets: dict[str, dict[str, str]],
           tuners: dict[str, dict[str, Any]], version: str) -> dict[str, Any]:
    """The ``sealed`` section of the results ``doc``: ``datasets`` per target (file, sha256), ``tuners`` per label
    (``code_digest``'s), and a record per run."""
    runs = []
    for run in doc["runs"]:
        meta = run["meta"]
        target = f"{meta['benchmark']}/{meta['gpu']}"
        runs.append({"run_id": meta["run_id"], "label": meta["label"], "target": target, "seed": meta["seed"],
                     "options": meta["spec"]["tuner"]["options"], "dataset_sha256": datasets[target]["sha256"],
                     "code_digest": tuners[meta["label"]]["code_digest"], "bat_version": version,
                     "trace_sha256": trace_sha256(run["trace"])})
    return {"format": FORMAT, "data_folder": str(folder), "isolated": True, "bat_version": version,
            "datasets": datasets, "tuners": tuners, "runs": runs}


def check(doc: dict[str, Any], where: str) -> None:
    """SealedError naming ``where`` and the run when the ``sealed`` section of ``doc`` is not its runs' record:
    a run without its record (or a record without its run), another seed, tuner, dataset digest, code digest or
    version, other options, a campaign not isolated, or a trace whose sha256 is not the recorded one."""
    sealed = doc["sealed"]
    if doc["campaign"].get("isolate") is not True or sealed["isolated"] is not True:
        raise SealedError(f"{where}: 'sealed': a sealed campaign runs every tuner isolated, this one did not")
    records = {r["run_id"]: r for r in sealed["runs"]}
    if len(records) != len(sealed["runs"]) or len(records) != len(doc["runs"]):
        raise SealedError(f"{where}: 'sealed.runs' records {len(sealed['runs'])} runs, the file holds "
                          f"{len(doc['runs'])}: every run has one record")
    for run in doc["runs"]:
        meta = run["meta"]
        r = records.get(meta["run_id"])
        if r is None:
            raise SealedError(f"{where}: run {meta['run_id']} has no record in 'sealed.runs'")
        target = f"{meta['benchmark']}/{meta['gpu']}"
        tuner = sealed["tuners"].get(meta["label"], {})
        expected = {"label": meta["label"], "target": target, "seed": meta.get("seed"),
                    "dataset_sha256": sealed["datasets"].get(target, {}).get("sha256"),
                    "code_digest": tuner.get("code_digest"), "bat_version": sealed["bat_version"],
                    "trace_sha256": trace_sha256(run["trace"])}
        spec = meta.get("spec")
        if isinstance(spec, dict) and isinstance(spec.get("tuner"), dict):
            expected["options"] = spec["tuner"].get("options")
        if wrong := [k for k, v in expected.items() if r.get(k) != v]:
            raise SealedError(f"{where}: run {meta['run_id']}: its sealed record's {', '.join(wrong)} "
                              "disagree with the run (a stored run or its record was changed)")


def seal_results(results: Path, folder: Path, files: dict[str, Path], digests: dict[str, str],
                 tuners: dict[str, dict[str, Any]], version: str) -> dict[str, Any]:
    """Add the ``sealed`` section to the ``results`` file a sealed campaign wrote; ``digests``: each target's
    dataset sha256 taken before the runs (SealedError when a file changed since)."""
    from bat.core import jsonout
    from bat.core.atomic import write_text
    from bat.core.limits import MAX_DATA_BYTES, loads, read_bytes

    datasets = {}
    for target, path in files.items():
        if file_sha256(path) != digests[target]:
            raise SealedError(f"--sealed: {path} changed while the campaign ran; its runs are not sealed")
        datasets[target] = {"file": path.name, "sha256": digests[target]}
    doc = loads(read_bytes(results, MAX_DATA_BYTES), str(results), finite=False)
    doc["sealed"] = record(doc, folder, datasets, tuners, version)
    write_text(results, jsonout.dumps(doc, key=None))
    return doc["sealed"]
