"""The part of ``bat compare``'s ``results.json`` a leaderboard reads, as a shape every source is checked against.

A shape is a type (or a tuple of types), ``[shape]`` for a list of items of
that shape, or a dict of key -> shape (``"*"``: every key, e.g. a tuner label)
in which every key but those marked ``Optional`` must be present. A number is
an int or a float (never a bool); ``NUMBER_OR_NONE`` admits JSON ``null``
(compare writes a missing value so). Nothing else of the file is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NUMBER = ("number", (int, float))
NUMBER_OR_NONE = ("number or null", (int, float, type(None)))
INTEGER = ("integer", (int,))
TEXT = ("string", (str,))
FLAG = ("true or false", (bool,))
LIST = ("list", (list,))
OBJECT = ("object", (dict,))


@dataclass(frozen=True)
class Optional:
    """A key that may be absent."""

    shape: Any


INTERVAL = {"score": NUMBER_OR_NONE, "ci_low": NUMBER_OR_NONE, "ci_high": NUMBER_OR_NONE}
SHAPE = {
    "campaign": {"tuners": [{"label": TEXT, "spec": TEXT, "options": LIST}], "budgets": [INTEGER],
                 "repeats": INTEGER, "backend": Optional(TEXT), "isolate": Optional(FLAG)},
    "cells": [{"label": TEXT, "benchmark": TEXT, "gpu": TEXT, "budget": INTEGER, "n": Optional(INTEGER),
               "median": NUMBER_OR_NONE, "q1": NUMBER_OR_NONE, "q3": NUMBER_OR_NONE, "score": NUMBER_OR_NONE}],
    "methodology": {
        "aggregate": {"*": {"evaluations": INTERVAL, "time": INTERVAL}},
        "targets": {"*": {
            "scores": {"*": {"evaluations": {**INTERVAL, "runs": Optional(INTEGER)},
                             "time": {**INTERVAL, "runs": Optional(INTEGER)}}},
            "evaluation_window": Optional(NUMBER_OR_NONE), "time_window_s": Optional(NUMBER_OR_NONE),
            "simulated_time": Optional(TEXT),
            "noise_aware_optimum": Optional({"best_ms": NUMBER_OR_NONE, "size": INTEGER}),
            "data_checks": Optional({"flagged": FLAG, "findings": LIST})}},
        "success_rates": Optional([{"label": TEXT, "benchmark": TEXT, "gpu": TEXT, "budget": INTEGER,
                                    "runs": INTEGER, "successes": INTEGER}]),
        "hitting_times": Optional([{"label": TEXT, "benchmark": TEXT, "gpu": TEXT,
                                    "evaluations": NUMBER_OR_NONE}])},
    "runs": [{"meta": {"run_id": TEXT, "label": TEXT, "benchmark": TEXT, "gpu": TEXT, "budgets": [INTEGER],
                       "best_known_ms": NUMBER_OR_NONE, "space_hash": Optional(TEXT), "seed": Optional(INTEGER)},
              "trace": {"charged": [FLAG], "best_so_far_ms": [NUMBER_OR_NONE]}}],
    # bat compare --sealed (bat.leaderboard.sealed): the digests of every run
    "sealed": Optional({
        "format": TEXT, "bat_version": TEXT, "isolated": FLAG,
        "datasets": {"*": {"file": TEXT, "sha256": TEXT}},
        "tuners": {"*": {"spec": TEXT, "code_digest": TEXT, "library": ("string or null", (str, type(None))),
                         "library_version": ("string or null", (str, type(None)))}},
        "runs": [{"run_id": TEXT, "label": TEXT, "target": TEXT, "seed": INTEGER, "options": LIST,
                  "dataset_sha256": TEXT, "code_digest": TEXT, "bat_version": TEXT, "trace_sha256": TEXT}]}),
}


def mismatch(value: Any, shape: Any, path: str = "") -> tuple[str, str] | None:
    """The first place where ``value`` is not of ``shape``: (its path, what is wrong); None when it is."""
    if isinstance(shape, tuple):
        name, kinds = shape
        if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
            return path or "(the file)", f"not a {name}"
        return None
    if isinstance(shape, list):
        if not isinstance(value, list):
            return path or "(the file)", "not a list"
        for i, item in enumerate(value):
            if found := mismatch(item, shape[0], f"{path}[{i}]"):
                return found
        return None
    if not isinstance(value, dict):
        return path or "(the file)", "not an object"
    for key, sub in shape.items():
        if key == "*":
            items = list(value.items())
        elif key in value:
            items = [(key, value[key])]
        elif isinstance(sub, Optional):
            continue
        else:
            return f"{path}.{key}".lstrip("."), "missing"
        for k, v in items:
            if found := mismatch(v, sub.shape if isinstance(sub, Optional) else sub, f"{path}.{k}".lstrip(".")):
                return found
    return None
