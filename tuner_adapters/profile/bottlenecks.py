"""Bottleneck analysis, reaction, scoring and normalisation of the profile-guided search.

Every formula is METHODS.md's ("Profile-guided search"). Counters come in
by their short names (``bat.core.counters.METRICS``) with utilisations
as Nsight Compute reports them (0-100); the /10 scaling of the spec is
applied here. Scores use the spec's sign: a candidate that lowers a counter
that should fall scores positively.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from bat.core.counters import INSTRUCTION_TYPES

#: ops counters that get a reaction, in score-column order ("LOC_O" and "threads" are derived)
REACTED: tuple[str, ...] = (
    "DRAM_RT", "DRAM_WT", "L2_RT", "L2_WT", "SHR_LT", "SHR_WT", "TEX_RWT", "LOC_O",
    *INSTRUCTION_TYPES, "INST_ISSUE_U", "SM_E", "threads",
)


@dataclass(frozen=True)
class Constants:
    """The method's constants (the tuner exposes each as a hyper-parameter)."""

    inst_reaction: float = 0.7
    issue_threshold: bool = True  # False: the authors' code, +b_issue without the threshold
    cutoff: float = -0.25
    exponent: float = 8.0
    floor: float = 1e-4

    def __post_init__(self) -> None:
        if not 0.0 <= self.inst_reaction < 1.0:
            raise ValueError(f"inst_reaction must be in [0, 1), got {self.inst_reaction}")
        if self.cutoff >= 0.0:
            raise ValueError(f"cutoff must be negative, got {self.cutoff}")
        if self.exponent <= 0 or not 0 < self.floor < 1:
            raise ValueError(f"exponent must be > 0 and floor in (0, 1), got {self.exponent}, {self.floor}")


def local_overhead(loc_st: np.ndarray | float, l2_wt: np.ndarray | float) -> np.ndarray:
    """LOC_O = 100 * local stores / L2 write sectors (0 where L2_WT is 0)."""
    loc, l2 = np.asarray(loc_st, dtype=float), np.asarray(l2_wt, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(l2 > 0, 100.0 * loc / np.where(l2 > 0, l2, 1.0), 0.0)


def _split(rt: float, wt: float, load: float) -> tuple[float, float]:
    """(b_read, b_write) of a memory: the load (U/10, in [0, 1]) shared by read and write traffic."""
    total = rt + wt
    if total <= 0:
        return 0.0, 0.0
    return rt / total * load, wt / total * load


def _pct(value: float) -> float:
    """A 0-100 utilisation as a fraction in [0, 1] (the spec's U/10 with U = metric/10)."""
    return float(np.clip(value, 0.0, 100.0)) / 100.0


def bottlenecks(pc: Mapping[str, float], threads: float | None, cores: int) -> dict[str, float]:
    """Every bottleneck of the profiled configuration, each in [0, 1].

    ``pc`` maps short names to the metrics as ncu reports them; ``threads``
    is the launched thread count (None: unknown, b_paral = 0); ``cores`` the
    GPU's CUDA cores.
    """
    dram, l2, tex, shr = (_pct(pc[k]) for k in ("DRAM_U", "L2_U", "TEX_U", "SHR_U"))
    b: dict[str, float] = {}
    b["dram_read"], b["dram_write"] = _split(pc["DRAM_RT"], pc["DRAM_WT"], dram)
    b["l2_read"], b["l2_write"] = _split(pc["L2_RT"], pc["L2_WT"], l2)
    b["shr_read"], b["shr_write"] = _split(pc["SHR_LT"], pc["SHR_WT"], shr)
    b["tex"] = tex
    loc_o = float(local_overhead(pc["LOC_ST"], pc["L2_WT"]))
    b["local"] = float(np.clip(loc_o / 100.0 * max(dram, l2, tex), 0.0, 1.0))
    issue = float(np.clip(pc["INST_ISSUE_U"], 0.0, 100.0))
    warp_e = pc["WARP_RATIO"] * 100.0 / 32.0
    warp_np_e = pc["WARP_NP_E"]
    ins_fitted = 32.0 * pc["INST_EXE"] * (100.0 / warp_e) * (100.0 / warp_np_e) if warp_e > 0 and warp_np_e > 0 else 0.0
    ins_util = min(1.0, issue / 50.0)
    shares = {x: (pc[x] / ins_fitted if ins_fitted > 0 else 0.0) for x in INSTRUCTION_TYPES}
    for x, share in shares.items():
        b[x] = share * ins_util
    b["issue"] = max(shares.values()) * (100.0 - issue) / 100.0
    b["sm"] = (100.0 - float(np.clip(pc["SM_E"], 0.0, 100.0))) / 100.0
    b["paral"] = 0.0 if threads is None else max(0.0, (5.0 * cores - threads) / (5.0 * cores))
    return b


def reaction(b: Mapping[str, float], k: Constants) -> dict[str, float]:
    """The wanted change of each reacted ops counter, in [-1, 1] (keys: ``REACTED``)."""
    r = k.inst_reaction
    delta = {
        "DRAM_RT": -b["dram_read"], "DRAM_WT": -b["dram_write"],
        "L2_RT": -b["l2_read"], "L2_WT": -b["l2_write"],
        "SHR_LT": -b["shr_read"], "SHR_WT": -b["shr_write"],
        "TEX_RWT": -b["tex"], "LOC_O": -b["local"],
    }
    for x in INSTRUCTION_TYPES:
        delta[x] = -(b[x] - r) / (1.0 - r) if b[x] > r else 0.0
    if k.issue_threshold:
        delta["INST_ISSUE_U"] = (b["issue"] - r) / (1.0 - r) if b["issue"] > r else 0.0
    else:
        delta["INST_ISSUE_U"] = b["issue"]
    delta["SM_E"] = b["sm"]
    delta["threads"] = b["paral"]
    return {name: float(np.clip(delta[name], -1.0, 1.0)) for name in REACTED}


def scores(delta: np.ndarray, candidates: np.ndarray, profiled: np.ndarray) -> np.ndarray:
    """Raw score of each candidate row: sum of delta_k (c_k - p_k) / (c_k + p_k).

    ``candidates`` is (n, k), ``profiled`` and ``delta`` (k,), columns in
    ``REACTED`` order. A term is dropped where c_k + p_k is 0 (both zero),
    where delta_k is 0, or where a counter is unknown (NaN).
    """
    active = np.flatnonzero(delta != 0)
    if active.size == 0:
        return np.zeros(len(candidates))
    out = np.zeros(len(candidates))
    for k in active:  # column by column: no (n, k) temporaries (columns are contiguous in Fortran order)
        c, p = candidates[:, k], profiled[k]
        total = c + p
        out += delta[k] * np.divide(c - p, total, out=np.zeros_like(total), where=total > 0)  # NaN: dropped
    return out


def weights(raw: np.ndarray, k: Constants) -> np.ndarray:
    """Normalised weights: (1 + s/s_max)^8 above 0, max(floor, (1 - s/s_min)^8) down to the cutoff, floor below."""
    out = np.full(raw.shape, k.floor)
    if raw.size == 0:
        return out
    s_max, s_min = float(raw.max()), float(raw.min())
    pos = raw > 0
    if s_max > 0:
        out[pos] = (1.0 + raw[pos] / s_max) ** k.exponent
    mid = (raw > k.cutoff) & ~pos
    if s_min < 0:
        out[mid] = np.maximum(k.floor, (1.0 - raw[mid] / s_min) ** k.exponent)
    else:
        out[mid] = 1.0
    return out
