"""Digests of the traces every registered tuner makes, to show that a change leaves results exactly as they were.

Each tuner runs the tuner battery's compared runs (``main`` and ``types`` of
bat.testing.runs, on the synthetic spaces) and one replayed run on the GEMM
RTX 3090 data shipped in results/ (a profile tuner: the KTT Coulomb data with
its counters) (budget ``REPLAY_BUDGET``, seed 3, and a
longer one for the random searches, the
tuner's time charged as a constant so every column is deterministic; a
transfer tuner gets the other GPUs' data of the space as its prior). A
trace's digest is the SHA-256 of its CSV without the columns ``LEFT_OUT``.
The recorded digests are ``tests/fixtures/traces/digests.json``, made by
``python tests/trace_digests.py`` (see the fixture's ``made_by``).
"""

# ruff: noqa: E402 (OpenBLAS is pinned before NumPy loads)
from __future__ import annotations

import hashlib
import json
import sys
from functools import cache
from pathlib import Path

from blas_pin import pin_openblas

pin_openblas()  # run as a script: the kernels the test run takes (tests/blas_pin.py)

import pandas as pd

from bat.core.errors import MissingDependencyError, TunerError
from bat.core.problem import Budget
from bat.registry import make_tuner, tuner_names
from bat.run.driver import run_tuner
from bat.run.targets import Target, load_prior, prior_gpus, replay_target, with_prior
from bat.testing.runs import COMPARED, execute

FIXTURE = Path(__file__).parent / "fixtures" / "traces" / "digests.json"
REPLAY_BUDGET = 40
REPLAY_SEED = 3
#: tuners that also make a long replayed run (``replay_long``: most draws of a sampler repeat none before)
LONG = {"reference:random": 1500, "reference:random-timeout": 1500, "reference:random-screen": 1500}
#: what the replayed run charges per proposal as the tuner's time (seconds)
CHARGE_S = 0.001
#: columns left out of a digest: the wall clock, and the cost parts the trace gained after the digests were
#: recorded (issue 41: ``cost_s`` holds them; tests/test_runs_ahead.py and the clock's tests check them)
LEFT_OUT = ["tuner_s", "compile_s", "verify_s"]


def digest(trace: pd.DataFrame) -> str:
    """SHA-256 of the trace as CSV, the columns ``LEFT_OUT`` left out."""
    return hashlib.sha256(trace.drop(columns=LEFT_OUT).to_csv(index=False).encode()).hexdigest()


@cache
def _target(prior: bool, counters: bool = False) -> Target:
    target = replay_target("coulomb", "RTX_2080_Ti") if counters else replay_target("gemm", "RTX_3090")
    return with_prior(target, load_prior(target, prior_gpus(target.data_hash, target.gpu))) if prior else target


def _replayed(name: str, budget: int) -> str:
    """The digest of a replayed run of ``name``, or the error it raised (the same error is the same result)."""
    target = _target(name.startswith("transfer"), name.startswith("profile"))
    try:
        run = run_tuner(name, target, budget=Budget(max_evals=budget), seed=REPLAY_SEED, check_data=False,
                        tuner_charge_s=CHARGE_S)
    except TunerError as exc:
        return f"{type(exc).__name__}: {exc}"
    return digest(run.trace)


def digests(name: str) -> dict[str, str]:
    """The digest of each run of tuner ``name``: the battery's compared runs, then ``replay``."""
    out = {run: digest(execute(run, make_tuner(name), 1).trace) for run in COMPARED}
    out["replay"] = _replayed(name, REPLAY_BUDGET)
    if name in LONG:
        out["replay_long"] = _replayed(name, LONG[name])
    return out


def main(names: list[str]) -> None:
    recorded = json.loads(FIXTURE.read_text())["tuners"] if FIXTURE.exists() else {}
    for name in names or tuner_names():
        try:
            recorded[name] = digests(name)
        except MissingDependencyError:  # not installed here: no digest
            continue
        print(name, recorded[name], flush=True)
        FIXTURE.write_text(json.dumps({"made_by": "python tests/trace_digests.py [TUNER ...]",
                                       "tuners": dict(sorted(recorded.items()))}, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
