"""The transfer prior over the protocol (version 2): other GPUs' measured data, page by page.

A target's facts may hold ``others`` (bat.core.facts): measured datasets of
other GPUs on the same space, never the target's own. The server lists them
in the hello reply (``target.others``: each GPU's id, name, public
specification and row count) and sends one on request, ``PRIOR_PAGE_ROWS``
rows per ``prior`` reply (bat.core.limits): the configurations as arrays of
values in the order of ``parameters``, their statuses and their objectives
(ms, null when not ok). Times, counters and every other column stay with the
server. ``RemotePrior`` is the client's side: a mapping of GPU id to a
``Dataset`` rebuilt from those pages on first use, so a Python tuner reads
``problem.facts.others`` as it does in-process, in the same row order.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from bat.core.dataset import Dataset, DatasetMeta, make_frame
from bat.core.errors import ProtocolError
from bat.core.gpus import GpuFacts, gpu_facts
from bat.core.limits import PRIOR_PAGE_ROWS

if TYPE_CHECKING:
    from bat.core.facts import TargetFacts
    from bat.core.space import SearchSpace
    from bat.protocol.client import Client

#: the fields of a GPU's public specification (bat.core.gpus.GpuFacts) the protocol sends
GPU_FACT_FIELDS = ("name", "vendor", "architecture", "compute_capability", "compute_units",
                   "memory_bandwidth_gbs", "l2_bytes")


def gpu_facts_message(facts: GpuFacts | None) -> dict[str, Any] | None:
    """A GPU's public specification as the protocol sends it (null when the GPU is not listed)."""
    return None if facts is None else {name: getattr(facts, name) for name in GPU_FACT_FIELDS}


def others_message(facts: TargetFacts) -> list[dict[str, Any]]:
    """``target.others`` of the hello reply: each other GPU of the prior, without its data."""
    return [{"gpu": gpu, "gpu_name": data.meta.gpu_name, "benchmark": data.meta.benchmark,
             "space_hash": data.meta.space_hash, "rows": len(data.frame),
             "gpu_facts": gpu_facts_message(gpu_facts(gpu))}
            for gpu, data in facts.others.items()]


def page(facts: TargetFacts, space: SearchSpace, gpu: str, offset: int) -> dict[str, Any]:
    """The ``prior`` reply: rows ``offset`` .. ``offset + PRIOR_PAGE_ROWS`` of GPU ``gpu``'s data."""
    if gpu not in facts.others:
        listed = ", ".join(facts.others) or "none: this problem has no prior"
        raise ProtocolError("invalid_message", f"{gpu!r} is not a GPU of the prior (target.others: {listed})", "gpu")
    frame = facts.others[gpu].frame
    if offset > len(frame):
        raise ProtocolError("invalid_message", f"{offset} is past the {len(frame)} rows of {gpu}", "offset")
    part = frame.iloc[offset:offset + PRIOR_PAGE_ROWS]
    end = offset + len(part)
    values = part[list(space.names)].to_numpy(dtype=object).tolist()
    objective = [float(v) if ok and math.isfinite(v) else None
                 for ok, v in zip((part["status"] == "ok").tolist(), part["objective_ms"].astype(float).tolist(),
                                  strict=True)]
    return {"type": "prior", "gpu": gpu, "offset": offset, "total": len(frame),
            "configs": [[_plain(v) for v in row] for row in values], "status": part["status"].astype(str).tolist(),
            "objective": objective, "next": end if end < len(frame) else None}


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


class RemotePrior(Mapping[str, Dataset]):
    """``problem.facts.others`` of a protocol client: each GPU's data fetched with ``prior`` on first use."""

    def __init__(self, client: Client, problem: Mapping[str, Any]) -> None:
        self.client = client
        self.names = [p["name"] for p in problem["parameters"]]
        self.entries = {e["gpu"]: e for e in (problem.get("target") or {}).get("others", [])}
        self._data: dict[str, Dataset] = {}

    def __getitem__(self, gpu: str) -> Dataset:
        if gpu not in self.entries:
            raise KeyError(gpu)
        if gpu not in self._data:
            self._data[gpu] = self._fetch(gpu)
        return self._data[gpu]

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, gpu: object) -> bool:
        return gpu in self.entries

    def _fetch(self, gpu: str) -> Dataset:
        entry, rows = self.entries[gpu], []
        offset: int | None = 0
        while offset is not None:
            reply = self.client.prior(gpu, offset)
            for values, status, objective in zip(reply["configs"], reply["status"], reply["objective"], strict=True):
                rows.append({**dict(zip(self.names, values, strict=True)), "status": status,
                             "objective_ms": objective})
            offset = reply["next"]
        meta = DatasetMeta(benchmark=entry["benchmark"], space_hash=entry["space_hash"], gpu=gpu,
                           gpu_name=entry["gpu_name"], source="the BAT protocol's prior request")
        return Dataset(make_frame(self.names, rows), meta, tuple(self.names))
