"""The FAIR Benchmark Hub's brute force over a Kernel Tuner strategy's hyper-parameters, beside a hypertune.

The hub keeps, per strategy, a Kernel Tuner cache whose "configurations" are
hyper-parameter settings and whose objective is each setting's ``score``
(``hyperparamtuning_paper_bruteforce_<strategy>.json``, kernel name
``hyperparamtuning_<strategy>``). ``bat hypertune --hub FILE`` reads it for
the same strategy (``kernel_tuner:<strategy>``): every option it varies must
be one the tuner declares, every value inside the declared range. The
hypertune then searches the hub's grid (its values per option; the other
options stay at their defaults, and the defaults remain a setting), and its
own training scores of the settings both scored are rank-correlated with
the hub's (Spearman). What differs between the two scores is stated, never
reconciled: ours is this project's methodology score on evaluations (higher
is better) on this hypertune's training datasets; the file's ``score`` is the
value as the hub stored it, one per setting, and the file names neither the
datasets, the budget nor the direction of its score (Kernel Tuner minimises
an objective unless told otherwise).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bat.analysis.hypertune.splits import HypertuneError
from bat.core.errors import BatError
from bat.core.hyperparams import HyperParam
from bat.core.limits import loads, read_text

PREFIX = "hyperparamtuning_"


@dataclass(frozen=True)
class HubBruteForce:
    """One strategy's brute force as the hub stored it."""

    path: str
    strategy: str
    values: dict[str, list[Any]]  # the hub's grid, per option, in the file's key order
    settings: tuple[tuple[Any, ...], ...]  # each scored setting's values, in the order of ``values``
    scores: tuple[float, ...]
    device: str
    objective: str

    def score_of(self, setting: dict[str, Any]) -> float | None:
        """The hub's score of ``setting`` (its values of the hub's options), None when the hub has none."""
        key = tuple(setting.get(name) for name in self.values)
        return dict(zip(self.settings, self.scores, strict=True)).get(key)

    def narrowed(self, params: tuple[HyperParam, ...]) -> tuple[HyperParam, ...]:
        """The declared ``params`` of the hub's options, each searched over the hub's values only."""
        return tuple(replace(p, kind="choice", choices=tuple(self.values[p.name]), low=None, high=None, log=False)
                     for p in params if p.name in self.values)


def read_hub(path: str | Path, tuner: str, params: tuple[HyperParam, ...]) -> HubBruteForce:
    """The hub's brute force of ``tuner``'s strategy (HypertuneError naming ``--hub`` and the fault)."""
    where = f"--hub {path}"
    try:
        raw = loads(read_text(path), str(path))
    except (BatError, OSError, ValueError) as exc:
        raise HypertuneError(f"{where}: {exc}") from None
    keys = ("kernel_name", "tune_params_keys", "tune_params", "cache")
    if not isinstance(raw, dict) or any(k not in raw for k in keys):
        raise HypertuneError(f"{where}: not a Kernel Tuner cache of a brute force (keys {', '.join(keys)})")
    strategy = str(raw["kernel_name"]).removeprefix(PREFIX)
    if not str(raw["kernel_name"]).startswith(PREFIX) or tuner != f"kernel_tuner:{strategy}":
        raise HypertuneError(f"{where}: a brute force of {str(raw['kernel_name'])[:60]!r}, not of the tuner "
                             f"{tuner} (the hub names kernel_tuner:X's file {PREFIX}X)")
    declared = {p.name: p for p in params}
    names = raw["tune_params_keys"]
    if (not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names)
            or len(set(names)) != len(names) or not isinstance(raw["tune_params"], dict)):
        raise HypertuneError(f"{where}: tune_params_keys is not a list of distinct names with tune_params beside it")
    values: dict[str, list[Any]] = {}
    for name in names:
        if name not in declared:
            raise HypertuneError(f"{where}: the hub varies {str(name)[:40]!r}, which {tuner} does not declare "
                                 f"(declared: {', '.join(declared)})")
        listed = raw["tune_params"].get(name)
        if not isinstance(listed, list) or not listed:
            raise HypertuneError(f"{where}: tune_params.{name} is not a list of values")
        values[name] = [_checked(declared[name], v, f"{where}: tune_params.{name}") for v in listed]
    settings, scores = [], []
    if not isinstance(raw["cache"], dict):
        raise HypertuneError(f"{where}: cache is not an object")
    for key, entry in raw["cache"].items():
        score = entry.get("score") if isinstance(entry, dict) else None
        if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
            continue  # a setting the hub could not score
        setting = tuple(entry.get(name) for name in names)
        for name, v in zip(names, setting, strict=True):
            if v not in values[name]:
                raise HypertuneError(f"{where}: cache[{str(key)[:40]!r}].{name} = {v!r} is not in tune_params.{name}")
        settings.append(setting)
        scores.append(float(score))
    if len(set(settings)) != len(settings) or not settings:
        raise HypertuneError(f"{where}: {'no scored setting' if not settings else 'a setting scored twice'}")
    return HubBruteForce(str(path), strategy, values, tuple(settings), tuple(scores),
                         str(raw.get("device_name", "")), str(raw.get("objective", "")))


def agreement(hub: HubBruteForce, tried: list[dict[str, Any]], described: str) -> dict[str, Any]:
    """Spearman's rank correlation of the hypertune's scores (``tried``) and the hub's, on the settings both
    scored, with what differs between the two; ``described``: the hypertune's training data and runs."""
    from scipy.stats import spearmanr

    pairs = [(t["score"], hub.score_of(t["setting"])) for t in tried if t.get("score") is not None]
    pairs = [(ours, theirs) for ours, theirs in pairs if theirs is not None]
    rho = p_value = None
    if len(pairs) >= 3:
        result = spearmanr([a for a, _ in pairs], [b for _, b in pairs])
        if math.isfinite(result.statistic):
            rho, p_value = float(result.statistic), float(result.pvalue)
    return {
        "file": hub.path, "strategy": hub.strategy, "hub_settings": len(hub.settings),
        "shared_settings": len(pairs), "spearman": rho, "p_value": p_value,
        "ours": f"methodology score on evaluations (bat.analysis.score; 0 = random search, 1 = the optimum, "
                f"higher is better), {described}",
        "hub": f"the file's {hub.objective or 'objective'} as stored, one value per setting, recorded on "
               f"{hub.device or 'an unnamed device'}; the file names neither its datasets, its budget nor "
               "whether a lower or a higher value is better, so the datasets the two share cannot be told from it",
    }


def _checked(p: HyperParam, value: Any, where: str) -> Any:
    try:
        return p.check(value, where)
    except BatError as exc:
        raise HypertuneError(str(exc)) from None
