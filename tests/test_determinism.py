"""`bat run` gives every registered tuner the same trace for the same seed in two processes whose
string hashing differs (PYTHONHASHSEED 1 and 2), wall-clock columns aside.

Each process runs `bat run` through its real entry point for every registered
tuner, one after the other, with a budget of 10 evaluations: tuners that
read counters on coulomb (the shipped dataset with counters), the others on
gemm (a constrained space). The two processes run side by side, once for the
module (``runs``; its tests on one xdist worker, as every file's: tests/conftest.py). A tuner
whose library is not installed must fail the same way in both, with
MissingDependencyError. The tuners that declare themselves ``slow`` (a
surrogate fit per evaluation) are checked by their own test. Both tests take over 10 CPU seconds
(tests/cpu_seconds.json), so both are marked slow: CI runs them (``.ci/run`` runs every test);
``pytest -m "not slow"`` leaves them out.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bat.core.trace import read_trace
from bat.registry import make_tuner, tuner_names

ROOT = Path(__file__).resolve().parents[1]
#: columns and metadata keys that measure wall-clock time, not what the tuner did
WALL_CLOCK_COLUMNS = ("tuner_s",)
WALL_CLOCK_META = ("tuner_s", "wall_s")
HASH_SEEDS = ("1", "2")

CHILD = textwrap.dedent("""
    import contextlib, io, json, sys
    from bat.cli import main
    from bat.registry import make_tuner

    out, names = sys.argv[1], sys.argv[2:]
    report = {}
    for name in names:
        bench = "coulomb" if make_tuner(name).needs_counters else "gemm"
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["run", "-t", name, "-b", bench, "-n", "10", "-s", "3", "--debug",
                         "-o", f"{out}/{name.replace(':', '_')}.parquet"])
        report[name] = {"code": code, "stderr": err.getvalue()}
    print(json.dumps(report))
""")


def groups() -> dict[str, list[str]]:
    names = tuner_names()
    slow = [n for n in names if make_tuner(n).slow]
    return {"fast": [n for n in names if n not in slow], "slow": slow}


def run_both(names: list[str], tmp_path: Path) -> list[tuple[Path, dict]]:
    procs = []
    for seed in HASH_SEEDS:
        out = tmp_path / f"hash{seed}"
        out.mkdir()
        env = {**os.environ, "PYTHONHASHSEED": seed}
        procs.append((out, subprocess.Popen([sys.executable, "-c", CHILD, str(out), *names], cwd=tmp_path,
                                            env=env, stdout=subprocess.PIPE, text=True)))
    results = []
    for out, proc in procs:
        stdout, _ = proc.communicate(timeout=1500)
        assert proc.returncode == 0, stdout
        results.append((out, json.loads(stdout.strip().splitlines()[-1])))
    return results


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, dict]]:
    """Every registered tuner run by ``bat run`` in each of the two processes: (output folder, report) of each."""
    return run_both(tuner_names(), tmp_path_factory.mktemp("hash-seeds"))


def check_same_traces(names: list[str], runs: list[tuple[Path, dict]]) -> None:
    (out_a, rep_a), (out_b, rep_b) = runs
    for name in names:
        a, b = rep_a[name], rep_b[name]
        assert a["code"] == b["code"], f"{name}: exit {a['code']} vs {b['code']}"
        if a["code"] != 0:  # only a library that is not installed may stop a tuner here, or (fair play)
            # profile:predicted, which has no other GPU's Coulomb counters to learn from (never the target's)
            # and the transfer tuners, which need other GPUs' data as a prior (the transfer study gives it)
            expected = ("MissingDependencyError" in a["stderr"]
                        or (name == "profile:predicted" and "predicted counters need a dataset" in a["stderr"])
                        or (name.startswith("transfer:") and f"{name} needs a prior" in a["stderr"]))
            assert expected, f"{name} failed: {a['stderr'][-2000:]}"
            assert a["stderr"].splitlines()[-1] == b["stderr"].splitlines()[-1]
            continue
        file = f"{name.replace(':', '_')}.parquet"
        (ta, ma), (tb, mb) = read_trace(out_a / file), read_trace(out_b / file)
        assert len(ta) >= 10, f"{name}: only {len(ta)} proposals"
        ta, tb = ta.drop(columns=list(WALL_CLOCK_COLUMNS)), tb.drop(columns=list(WALL_CLOCK_COLUMNS))
        if not ta.equals(tb):
            rows = (ta != tb).any(axis=1)
            first = int(rows.to_numpy().argmax()) if len(ta) == len(tb) else min(len(ta), len(tb))
            pytest.fail(f"{name}: the traces differ from step {first} between hash seeds {HASH_SEEDS}")
        for key in WALL_CLOCK_META:
            ma.pop(key, None)
            mb.pop(key, None)
        assert ma == mb, name


@pytest.mark.slow
def test_fast_tuners_same_seed_same_trace_across_hash_seeds(runs: list[tuple[Path, dict]]) -> None:
    check_same_traces(groups()["fast"], runs)


@pytest.mark.slow
def test_slow_tuners_same_seed_same_trace_across_hash_seeds(runs: list[tuple[Path, dict]]) -> None:
    names = groups()["slow"]
    assert {"smac", "smac:bo"} <= set(names)
    check_same_traces(names, runs)


def test_the_groups_cover_every_registered_tuner() -> None:
    g = groups()
    assert sorted(g["fast"] + g["slow"]) == sorted(tuner_names())
