"""A comparison's outputs are the same with 1 worker, 2 workers and on Dask; forked figure jobs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from bat.analysis.compare.study import compare
from bat.campaign.design import Campaign, TunerSpec
from bat.campaign.forked import fork_is_safe, run_forked

#: measured, not computed: they differ between any two runs of the same campaign
MEASURED = {"task_wall_s", "task_cpu_s", "wall_s"}


def _campaign() -> Campaign:
    # a declared tuner charge: the time axis is computed, not measured, so every number is reproducible
    return Campaign(tuners=(TunerSpec.parse("reference:random"), TunerSpec.parse("reference:genetic")),
                    targets=(("pnpoly", "RTX_3090"), ("convolution", "RTX_3090")), budgets=(4, 8), repeats=3,
                    tuner_charge_s=0.001)


def _computed(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _computed(v) for k, v in obj.items() if k not in MEASURED}
    if isinstance(obj, list):
        return [_computed(v) for v in obj]
    return obj


def _outputs(out: Path) -> tuple[Any, str, list[str]]:
    return (_computed(json.loads((out / "results.json").read_text())), (out / "summary.md").read_text(),
            sorted(p.name for p in (out / "plots").iterdir()))


@pytest.mark.slow
def test_one_worker_two_workers_and_dask_write_the_same_results(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed", reason="dask[distributed] (the 'dask' extra) is missing")
    c = _campaign()
    one = compare(c, tmp_path / "one", workers=1)
    two = compare(c, tmp_path / "two", workers=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        dask = compare(c, tmp_path / "dask", scheduler=cluster.scheduler_address)
    assert one.run.executed == two.run.executed == dask.run.executed == len(c.runs())
    results, summary, figures = _outputs(tmp_path / "one")
    assert len(figures) == 2 + 1 + 4  # a convergence figure per tuner, the overlay, score and ECDF per axis
    assert results["runs"] and results["methodology"]
    for mode in ("two", "dask"):
        other = _outputs(tmp_path / mode)
        assert other[0] == results, mode
        assert other[1] == summary, mode
        assert other[2] == figures, mode
    assert set(two.paths) == set(one.paths) == set(dask.paths)


FORKED = """
import json, os, sys
from contextvars import ContextVar
from bat.campaign.forked import fork_is_safe, run_forked

seen = ContextVar("seen", default="unset")
seen.set("set here")
jobs = [lambda i=i: (i, os.getpid(), seen.get()) for i in range(5)]
safe = fork_is_safe()
results, here = run_forked(jobs, 2, os.getpid)
serial, _ = run_forked(jobs, 1, lambda: None)
print(json.dumps({"safe": safe, "results": results, "here": here, "serial": serial}))
"""


def test_forked_jobs_run_in_other_processes_in_order_with_this_context() -> None:
    # a fresh interpreter: one thread, as `bat compare` has (another test's threads would make forking unsafe)
    done = subprocess.run([sys.executable, "-c", FORKED], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    results, here = out["results"], out["here"]
    assert out["safe"]  # Linux, one thread
    assert [r[0] for r in results] == list(range(5))  # in the order of the jobs
    assert all(r[1] != here for r in results)  # forked, while `meanwhile` ran here
    assert {r[2] for r in results} == {"set here"}  # the caller's context (the figure formats) went along
    assert out["serial"] == [[i, here, "set here"] for i in range(5)]


def test_forking_is_not_safe_with_another_thread() -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not fork_is_safe()
        results, here = run_forked([os.getpid, os.getpid], 2, os.getpid)
    finally:
        stop.set()
        other.join()
    assert results == [here, here]  # all here, in order


def _fails() -> None:
    raise ValueError("a figure failed")


def test_a_failing_forked_job_raises_here() -> None:
    with pytest.raises(ValueError, match="a figure failed"):
        run_forked([lambda: 1, _fails], 2, lambda: None)
