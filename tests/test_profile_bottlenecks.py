"""Bottlenecks, reaction, score sign and normalisation of the profile searcher, on hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from bat.tuner_adapters.profile.bottlenecks import REACTED, Constants, bottlenecks, reaction, scores, weights

CORES = 4352


def counters(**over: float) -> dict[str, float]:
    pc = {
        "DRAM_RT": 300, "DRAM_WT": 100, "DRAM_U": 80,       # b_read 0.75*0.8, b_write 0.25*0.8
        "L2_RT": 100, "L2_WT": 100, "L2_U": 50,             # 0.25, 0.25
        "SHR_LT": 50, "SHR_WT": 50, "SHR_U": 20,            # 0.1, 0.1
        "TEX_RWT": 7, "TEX_U": 30,                          # 0.3
        "LOC_ST": 20,                                       # LOC_O = 100*20/100 = 20 -> 0.2*0.8
        "INST_EXE": 100, "WARP_RATIO": 16, "WARP_NP_E": 80,  # fitted = 32*100*2*1.25 = 8000
        "INST_F32": 6400, "INST_INT": 800, "INST_F64": 0, "INST_MISC": 0, "INST_LDST": 0,
        "INST_CONT": 0, "INST_BCONV": 0,
        "INST_ISSUE_U": 40,                                 # ins_util 0.8
        "SM_E": 90,
    }
    pc.update(over)
    return pc


def test_memory_bottlenecks():
    b = bottlenecks(counters(), threads=None, cores=CORES)
    assert b["dram_read"] == pytest.approx(0.6) and b["dram_write"] == pytest.approx(0.2)
    assert b["l2_read"] == pytest.approx(0.25) and b["l2_write"] == pytest.approx(0.25)
    assert b["shr_read"] == pytest.approx(0.1) and b["shr_write"] == pytest.approx(0.1)
    assert b["tex"] == pytest.approx(0.3)
    assert b["local"] == pytest.approx(0.2 * 0.8)
    idle = bottlenecks(counters(DRAM_RT=0, DRAM_WT=0, L2_WT=0), threads=None, cores=CORES)
    assert idle["dram_read"] == 0 and idle["dram_write"] == 0 and idle["local"] == 0  # no traffic, no LOC_O


def test_instruction_issue_and_parallelism_bottlenecks():
    b = bottlenecks(counters(), threads=CORES * 5 / 2, cores=CORES)
    assert b["INST_F32"] == pytest.approx(0.8 * 0.8)
    assert b["INST_INT"] == pytest.approx(0.1 * 0.8)
    assert b["INST_F64"] == 0
    assert b["issue"] == pytest.approx(0.8 * 0.6)
    assert b["sm"] == pytest.approx(0.1)
    assert b["paral"] == pytest.approx(0.5)
    assert bottlenecks(counters(), threads=10 * CORES, cores=CORES)["paral"] == 0
    assert bottlenecks(counters(INST_ISSUE_U=100), None, CORES)["INST_F32"] == pytest.approx(0.8)


def test_reaction_thresholds():
    k7, k5 = Constants(), Constants(inst_reaction=0.5)
    b = bottlenecks(counters(), threads=None, cores=CORES)          # b_F32 = 0.64
    assert reaction(b, k7)["INST_F32"] == 0                          # below 0.7: no reaction
    assert reaction(b, k5)["INST_F32"] == pytest.approx(-(0.64 - 0.5) / 0.5)
    hot = bottlenecks(counters(INST_ISSUE_U=100), None, CORES)      # b_F32 = 0.8
    assert reaction(hot, k7)["INST_F32"] == pytest.approx(-0.1 / 0.3)
    low_issue = bottlenecks(counters(INST_ISSUE_U=10), None, CORES)  # b_issue = 0.8 * 0.9 = 0.72
    assert reaction(low_issue, k7)["INST_ISSUE_U"] == pytest.approx(0.02 / 0.3)
    assert reaction(b, k7)["INST_ISSUE_U"] == 0                      # 0.48 <= 0.7
    assert reaction(b, Constants(issue_threshold=False))["INST_ISSUE_U"] == pytest.approx(0.48)
    d = reaction(bottlenecks(counters(), threads=CORES, cores=CORES), k7)
    assert d["DRAM_RT"] == pytest.approx(-0.6) and d["LOC_O"] == pytest.approx(-0.16)
    assert d["SM_E"] == pytest.approx(0.1) and d["threads"] == pytest.approx(0.8)
    assert set(d) == set(REACTED)


def test_score_sign():
    delta = np.zeros(len(REACTED))
    delta[REACTED.index("DRAM_RT")] = -0.6   # DRAM reads should fall
    delta[REACTED.index("SM_E")] = 0.5       # SM efficiency should rise
    p = np.full(len(REACTED), 100.0)
    cand = np.tile(p, (4, 1))
    cand[0, REACTED.index("DRAM_RT")] = 50    # lowers reads: positive
    cand[1, REACTED.index("DRAM_RT")] = 200   # raises reads: negative
    cand[2, REACTED.index("SM_E")] = 300      # raises SM_E: positive
    cand[3, REACTED.index("INST_F64")] = 0    # a counter without reaction: no effect
    s = scores(delta, cand, p)
    assert s[0] == pytest.approx(-0.6 * (50 - 100) / 150) and s[0] > 0
    assert s[1] < 0 and s[2] == pytest.approx(0.5 * 200 / 400) and s[3] == 0
    both_zero = scores(delta, np.zeros((1, len(REACTED))), np.zeros(len(REACTED)))
    assert both_zero[0] == 0  # a term is dropped only when both counters are 0
    removes_all = p.copy()
    removes_all[REACTED.index("DRAM_RT")] = 0
    assert scores(delta, removes_all[None, :], p)[0] == pytest.approx(0.6)


def test_normalisation_bounds():
    k = Constants()
    raw = np.array([0.4, 0.2, 0.0, -0.1, -0.3, -0.5])
    w = weights(raw, k)
    np.testing.assert_allclose(w, [256.0, 1.5**8, 1.0, 0.8**8, 1e-4, 1e-4])
    rng = np.random.default_rng(3)
    raw = rng.normal(size=10_000)
    many = weights(raw, k)
    assert many.min() >= 1e-4 and many.max() == pytest.approx(256.0)
    assert (many[raw > 0] >= 1).all() and (many[raw <= -0.25] == 1e-4).all()
    assert (many[(raw <= 0) & (raw > -0.25)] <= 1).all()
    assert weights(np.zeros(3), k).tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="cutoff"):
        Constants(cutoff=0.1)
