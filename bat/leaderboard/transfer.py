"""A transfer study as a leaderboard input: the shape read from its ``results.json``, its rows checked against its runs.

``bat compare --study transfer`` writes a ``results.json`` with a ``study``
(its splits: per held-out target the source GPUs whose data is the prior),
its ``rows`` (per split, target, tuner and goal: median evaluations to the
goal with its interval, censored runs, random search's exact median, the
gain, the methodology score), a methodology view per split and every run's
metadata (``analysis/compare/transfer_report.py``). A leaderboard reads the
fields of ``SHAPE``, and ``check`` holds each row against the stored runs:
its split, target and sources are the study's, and it counts the runs of
that tuner on that target with that prior (the floor's: with none).
``runs`` lists each stored run's identity and the sha256 of its record, as
the site's signed manifest covers them.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from bat.core.errors import BatError
from bat.leaderboard.schema import INTEGER, INTERVAL, LIST, NUMBER, NUMBER_OR_NONE, TEXT, Optional, mismatch

_TARGET_SCORE = {**INTERVAL, "runs": Optional(INTEGER)}
SHAPE = {
    "study": {"floor": TEXT, "budget": INTEGER,
              "splits": [{"prior": TEXT, "name": TEXT,
                          "targets": [{"benchmark": TEXT, "gpu": TEXT, "sources": [TEXT]}]}],
              "campaign": {"tuners": [{"label": TEXT, "spec": TEXT, "options": LIST}], "repeats": INTEGER}},
    "goals": [NUMBER],
    "censoring": TEXT,
    "rows": [{"split": TEXT, "benchmark": TEXT, "gpu": TEXT, "sources": [TEXT], "label": TEXT, "goal": NUMBER,
              "runs": INTEGER, "budget": INTEGER, "median": NUMBER, "ci_low": NUMBER_OR_NONE,
              "ci_high": NUMBER_OR_NONE, "censored": INTEGER, "random_exact_median": NUMBER_OR_NONE,
              "gain": NUMBER_OR_NONE}],
    "methodology": {"*": {"aggregate": {"*": {"evaluations": INTERVAL, "time": INTERVAL}},
                          "targets": {"*": {"scores": {"*": {"evaluations": _TARGET_SCORE, "time": _TARGET_SCORE}}}}}},
    "runs": [{"meta": {"run_id": TEXT, "label": TEXT, "benchmark": TEXT, "gpu": TEXT, "seed": Optional(INTEGER),
                       "spec": {"prior": Optional([TEXT])}}}],
}


class TransferSourceError(BatError, ValueError):
    """A transfer study's results a leaderboard cannot read: a field of another shape, a row its runs do not hold."""


def is_transfer(doc: Any) -> bool:
    """Whether ``doc`` is the results of a transfer study (it has a ``study`` with ``splits``)."""
    return isinstance(doc, dict) and isinstance(doc.get("study"), dict) and "splits" in doc["study"]


def _prior(meta: dict[str, Any]) -> tuple[str, ...]:
    return tuple(meta["spec"].get("prior") or ())


def check(doc: Any, where: str) -> None:
    """TransferSourceError naming ``where`` and the field or row when ``doc`` is not a transfer study's results
    of ``SHAPE`` whose rows and scores hold for its runs (the module docstring)."""
    if found := mismatch(doc, SHAPE):
        raise TransferSourceError(f"{where}: '{found[0]}' {found[1]}: not the results.json of a transfer study "
                                  "(bat compare --study transfer)")
    study = doc["study"]
    labels = {t["label"] for t in study["campaign"]["tuners"]}
    splits = {s["prior"]: {f"{t['benchmark']}/{t['gpu']}": t["sources"] for t in s["targets"]}
              for s in study["splits"]}
    if unknown := sorted(set(doc["methodology"]) - set(splits)):
        raise TransferSourceError(f"{where}: 'methodology.{unknown[0]}': not a split of the study")
    count: dict[tuple[str, str, str, tuple[str, ...]], int] = {}
    for run in doc["runs"]:
        m = run["meta"]
        key = (m["label"], m["benchmark"], m["gpu"], _prior(m))
        count[key] = count.get(key, 0) + 1
    for i, row in enumerate(doc["rows"]):
        target = f"{row['benchmark']}/{row['gpu']}"
        if row["label"] not in labels or splits.get(row["split"], {}).get(target) != row["sources"]:
            raise TransferSourceError(f"{where}: 'rows[{i}]': {row['label']} on {target} in split {row['split']} "
                                      "with sources " + ", ".join(row["sources"]) + ": not a cell of the study")
        prior = () if row["label"] == study["floor"] else tuple(row["sources"])
        runs = count.get((row["label"], row["benchmark"], row["gpu"], prior), 0)
        scores = doc["methodology"].get(row["split"], {}).get("targets", {}).get(target, {}).get("scores", {})
        recorded = [s.get("runs") for s in scores.get(row["label"], {}).values()]
        if runs != row["runs"] or any(r not in (None, runs) for r in recorded):
            raise TransferSourceError(f"{where}: 'rows[{i}]': {row['label']} on {target} ({row['split']}) counts "
                                      f"{row['runs']} runs, the file holds {runs} (a stored run or row was changed)")


def runs(name: str, doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Each stored run of the transfer study ``doc`` (source ``name``) as the manifest lists it: its identity,
    its prior and the sha256 of its record (canonical JSON)."""
    return [{"source": name, "run_id": r["meta"]["run_id"], "label": r["meta"]["label"],
             "target": f"{r['meta']['benchmark']}/{r['meta']['gpu']}", "prior": list(_prior(r["meta"])),
             "seed": r["meta"].get("seed"),
             "sha256": hashlib.sha256(json.dumps(r, sort_keys=True, separators=(",", ":")).encode()).hexdigest()}
            for r in doc["runs"]]
