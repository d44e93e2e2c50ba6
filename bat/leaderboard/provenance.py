"""Where each target's data came from: the recorded dataset a leaderboard's runs replayed, found at build time.

For each (benchmark, GPU) of the sources, the dataset the registry finds on
the space the runs were recorded on (their ``space_hash``): its id, the
sha256 of its file, and its metadata (GPU name, driver, toolkit, date,
source, licence). ``build`` stores these facts in the site
(``data/targets.json``, sealed like every file), so ``--verify`` derives the
pages from them without the datasets. A target whose dataset is not found on
this machine (another data folder, a live campaign) says why instead.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from bat.core.errors import BatError
from bat.leaderboard.sources import Source, campaigns, target_key
from bat.registry import find_dataset

FACTS = ("gpu_name", "driver", "toolkit", "date", "source", "licence")


def dataset_facts(sources: Sequence[Source]) -> dict[str, dict[str, Any]]:
    """Per target (``benchmark/gpu``): the dataset's id, file digest and provenance, or why none was found."""
    sources = campaigns(sources)  # a transfer study's targets are shown on its own pages, without these facts
    spaces: dict[str, str] = {}
    for s in sources:
        for run in s.doc["runs"]:
            meta = run["meta"]
            if isinstance(meta.get("space_hash"), str):
                spaces.setdefault(f"{meta['benchmark']}/{meta['gpu']}", meta["space_hash"])
    out: dict[str, dict[str, Any]] = {}
    for name in sorted({t for s in sources for t in s.doc["methodology"]["targets"]}):
        benchmark, gpu = target_key(name)
        try:
            entry = find_dataset(benchmark, gpu, space_hash=spaces.get(name))
        except BatError as exc:
            out[name] = {"found": False, "why": str(exc)}
            continue
        out[name] = {"found": True, "dataset": entry.id, "space_hash": entry.meta.space_hash,
                     "sha256": hashlib.sha256(entry.path.read_bytes()).hexdigest(),
                     **{k: getattr(entry.meta, k) for k in FACTS}}
    return out
