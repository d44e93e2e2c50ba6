"""The hyper-parameter space of a tuner as a search space of this project, and the user's narrowing of it.

Each declared option becomes a parameter whose values are its domain
(bool, choice) or ``points`` values spread over its range (log-spaced where
the option is declared on a log scale), so any tuner of this project can
search it; the defaults are added to the values, so the default setting is a
point of the space. ``--params`` keeps some options (the others stay at
their defaults) and ``--range KEY=LOW:HIGH`` (or ``KEY=A|B`` for a choice)
narrows one; both are checked against the declaration.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from bat.analysis.hypertune.splits import HypertuneError
from bat.core.hyperparams import HyperParam
from bat.core.space import Parameter, SearchSpace


def declared(tuner: str) -> tuple[HyperParam, ...]:
    """The declared hyper-parameters of a registered tuner (HypertuneError when it declares none)."""
    from bat.registry import tuner_class

    cls, variant = tuner_class(tuner)
    params = cls.hyperparameters(variant)
    if not params:
        raise HypertuneError(f"--tuner {tuner}: declares no hyper-parameters to tune (`bat list tuners --options`)")
    return params


def narrow(params: tuple[HyperParam, ...], keep: list[str] | None, ranges: list[str]) -> tuple[HyperParam, ...]:
    """``params`` restricted to ``keep`` (None: all) with ``ranges`` applied; HypertuneError naming a bad one."""
    names = {p.name for p in params}
    for key in keep or ():
        if key not in names:
            raise HypertuneError(f"--params {key!r}: the tuner has no such hyper-parameter; "
                                 f"valid: {', '.join(sorted(names))}")
    chosen = {p.name: p for p in params if keep is None or p.name in keep}
    for text in ranges:
        key, sep, spec = text.partition("=")
        key = key.strip()
        if not sep or key not in names:
            raise HypertuneError(f"--range {text!r}: expected KEY=LOW:HIGH with KEY one of {', '.join(sorted(names))}")
        if key not in chosen:
            raise HypertuneError(f"--range {key!r}: not among --params")
        chosen[key] = _ranged(chosen[key], spec, text)
    return tuple(chosen.values())


def _ranged(p: HyperParam, spec: str, text: str) -> HyperParam:
    if p.kind == "bool":
        raise HypertuneError(f"--range {text!r}: {p.name} is a bool; it has no range")
    if p.kind == "choice":
        picked = tuple(c for c in p.choices if str(c) in spec.split("|"))
        if len(picked) != len(spec.split("|")):
            raise HypertuneError(f"--range {text!r}: choices of {p.name} are {'|'.join(map(str, p.choices))}")
        return replace(p, choices=picked, default=p.default if p.default in picked else picked[0])
    low_text, sep, high_text = spec.partition(":")
    low: float | None
    high: float | None
    try:
        low, high = (int(low_text), int(high_text)) if p.kind == "int" else (float(low_text), float(high_text))
    except ValueError:
        low = high = None
    if not sep or low is None or high is None or not (math.isfinite(low) and math.isfinite(high)) or low > high:
        raise HypertuneError(f"--range {text!r}: {p.name} is {p.kind}: expected LOW:HIGH with {p.kind} bounds, "
                             "LOW <= HIGH")
    if p.log and low <= 0:
        raise HypertuneError(f"--range {text!r}: {p.name} is searched on a log scale; LOW must be > 0")
    default = min(max(p.default, low), high)
    return replace(p, low=low, high=high, default=default)


def search_space(tuner: str, params: tuple[HyperParam, ...], points: int, grid_total: int | None = None,
                 *, with_defaults: bool = True) -> SearchSpace:
    """``params`` as a SearchSpace (see the module docstring); ``grid_total``: points per option chosen so
    the grid holds at most that many settings (a grid search of that size covers every option);
    ``with_defaults=False``: the values alone (a given grid, such as the hub's; the defaults are run anyway)."""
    if grid_total is not None:
        fixed = math.prod(len(p.domain) for p in params if p.domain) or 1
        numeric = sum(1 for p in params if not p.domain)
        points = max(2, int((grid_total / fixed) ** (1 / numeric))) if numeric else points
    out = []
    for p in params:
        values = p.grid(points)
        if with_defaults and p.default not in values:
            values = sorted([*values, p.default]) if not p.domain else [*values, p.default]
        out.append(Parameter(p.name, tuple(_plain(v) for v in values)))
    return SearchSpace(f"hyperparameters of {tuner}", out)


def _plain(v: Any) -> Any:
    return v if isinstance(v, bool | int | float | str) else str(v)
