"""An interrupted ``bat run`` on a measuring backend loses nothing: its journal, and ``--resume``."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bat.core.errors import OutputError, RunInterrupted
from bat.core.problem import Budget
from bat.run.driver import RunResult, run_tuner
from bat.run.recording.run_journal import SUFFIX, JournalledBackend, journal_header, open_checkpoint
from bat.run.targets import Target
from bat.testing.synthetic import FakeBackend, constrained_space

#: the runs' budget: the interrupted runs stop after 11 evaluations, one past Optuna's 10 random start-up
#: trials, so a resumed run answers a model's proposal from the journal too, then makes 9 more of its own
BUDGET = 20


class _Interrupting:
    """A backend that behaves like Ctrl-C after ``after`` evaluations."""

    name = "fake"

    def __init__(self, inner: FakeBackend, after: int) -> None:
        self.inner, self.after = inner, after

    def describe(self) -> str:
        return self.inner.describe()

    def evaluate(self, config):
        if len(self.inner.calls) == self.after:
            raise KeyboardInterrupt
        return self.inner.evaluate(config)

    def close(self) -> None:
        self.inner.close()


def _target(backend) -> Target:
    return Target(benchmark="synthetic", gpu="none", space=constrained_space(), backend=backend,
                  best_known_ms=None)


@functools.cache
def _whole(tuner: str) -> RunResult:
    """The uninterrupted run that a resumed one must equal (read, never changed, by the tests)."""
    return run_tuner(tuner, _target(FakeBackend()), budget=Budget(max_evals=BUDGET), seed=4)


def _header(seed: int = 4) -> dict:
    return journal_header(tuner="t", options=[], benchmark="synthetic", gpu="none", backend="fake",
                          budget_evals=BUDGET, budget_time_s=None, seed=seed,
                          space_hash=constrained_space().space_hash, noise="none")


@pytest.mark.parametrize("tuner", ["reference:genetic", "reference:random_forest", "optuna"])
def test_resumed_run_equals_uninterrupted_and_measures_nothing_twice(tmp_path: Path, tuner: str) -> None:
    trace = tmp_path / "run.parquet"
    whole = _whole(tuner)

    first = open_checkpoint(trace, _header(), resume=False)
    cut = JournalledBackend(_Interrupting(FakeBackend(), after=11), first)
    with pytest.raises(KeyboardInterrupt):
        run_tuner(tuner, _target(cut), budget=Budget(max_evals=BUDGET), seed=4)
    cut.close()
    assert len(list(tmp_path.glob(f"*{SUFFIX}"))) == 1

    again = open_checkpoint(trace, _header(), resume=True)
    assert again.resumed == 11
    measuring = FakeBackend()
    resumed_backend = JournalledBackend(measuring, again)
    resumed = run_tuner(tuner, _target(resumed_backend), budget=Budget(max_evals=BUDGET), seed=4)
    resumed_backend.close()
    assert (resumed_backend.reused, resumed_backend.measured) == (11, BUDGET - 11)
    assert len(measuring.calls) == BUDGET - 11  # nothing the journal held was measured again
    columns = [c for c in whole.trace.columns if c != "tuner_s"]
    assert resumed.trace[columns].equals(whole.trace[columns])


@pytest.mark.parametrize("tuner", ["reference:genetic", "optuna"])
def test_the_library_resumes_like_bat_run(tmp_path: Path, tuner: str) -> None:
    """``run_tuner(out=..., resume=True)`` in a notebook does what ``bat run --resume`` does."""
    trace = tmp_path / "run.parquet"
    whole = _whole(tuner)
    with pytest.raises(RunInterrupted, match=r"11 evaluations kept in .*run\.parquet\.\w+\.journal\.jsonl"):
        run_tuner(tuner, _target(_Interrupting(FakeBackend(), after=11)), budget=Budget(max_evals=BUDGET),
                  seed=4, out=trace)
    assert not trace.exists() and len(list(tmp_path.glob(f"*{SUFFIX}"))) == 1
    measuring, heard = FakeBackend(), []
    resumed = run_tuner(tuner, _target(measuring), budget=Budget(max_evals=BUDGET), seed=4, out=trace,
                        resume=True, on_note=heard.append)
    assert len(measuring.calls) == BUDGET - 11 and resumed.reused == 11
    assert heard[0].startswith("resuming: 11 evaluations from ") and heard == resumed.notes
    assert heard[-1] == ("resumed: 11 evaluations answered from the interrupted run's journal, "
                         f"{BUDGET - 11} measured now")
    assert resumed.trace_path == trace and not list(tmp_path.glob(f"*{SUFFIX}"))
    columns = [c for c in whole.trace.columns if c != "tuner_s"]
    assert resumed.trace[columns].equals(whole.trace[columns])
    with pytest.raises(OutputError, match="exists"):  # no clobbering without force
        run_tuner(tuner, _target(FakeBackend()), budget=Budget(max_evals=3), seed=4, out=trace)


def test_a_live_or_different_run_is_never_taken_over(tmp_path: Path) -> None:
    trace = tmp_path / "run.parquet"
    alive = open_checkpoint(trace, _header(), resume=False)
    alive.journal.append({"config": {}, "status": "ok", "objective_ms": 1.0, "times_ms": [1.0], "compile_ms": None,
                          "cost_s": 0.0, "message": "", "extra": {}})
    other_seed = open_checkpoint(trace, _header(seed=5), resume=False)
    other_seed.journal.close()
    second = open_checkpoint(trace, _header(), resume=True)  # the first is locked by its (live) run
    assert second.resumed == 0 and second.journal.path != alive.journal.path
    second.journal.close()
    alive.journal.close()
    third = open_checkpoint(trace, _header(), resume=False)  # not resuming: the two left are named
    assert sorted(n for _, n in third.others) == [0, 1]
    third.journal.close()


#: the budget of the ``bat run`` that is killed, then resumed
KILLED_N = 12
BAT = [sys.executable, "-c", "import sys; from bat.cli import main; sys.exit(main(sys.argv[1:]))"]


def _bat(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([*BAT, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True, **kwargs)


def _wait_for_lines(runs: Path, lines: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        journals = list(runs.glob(f"*{SUFFIX}"))
        if journals and journals[0].read_bytes().count(b"\n") >= lines + 1:
            return
        time.sleep(0.05)
    pytest.fail(f"the run wrote no {lines} journal lines (exit {proc.poll()})")


@pytest.mark.skipif(sys.platform != "linux", reason="the command benchmark's host compiler run is tested on Linux")
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_bat_run_killed_then_resumed(tmp_path: Path, how: signal.Signals) -> None:
    runs = Path(os.environ["BAT_DATA_DIR"]) / "runs"
    # 12 evaluations, the kill after 5 are journalled: each host compile takes far longer than the poll, so the
    # kill lands part-way, and the resumed run has 7 or so left to measure
    args = ("run", "-b", "matmul_c", "--backend", "command", "-t", "reference:genetic", "-n", str(KILLED_N), "-s", "2")
    proc = _bat(*args)
    _wait_for_lines(runs, 5, proc)
    os.kill(proc.pid, how)
    out, _ = proc.communicate(timeout=60)
    journals = list(runs.glob(f"*{SUFFIX}"))
    assert len(journals) == 1 and not list(runs.glob("*.parquet"))
    kept = journals[0].read_bytes().count(b"\n") - 1
    if how == signal.SIGTERM:  # like Ctrl-C: exit 130, naming the journal and --resume
        assert proc.returncode == 130
        assert journals[0].name in out.replace("\n", "") and "--resume" in out
    resumed = subprocess.run([*BAT, *args, "--resume"], capture_output=True, text=True,
                             timeout=300)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    said = " ".join(resumed.stdout.split())
    left = KILLED_N - kept
    assert f"resumed: {kept} evaluations answered from the interrupted run's journal, {left} measured now" in said
    assert not list(runs.glob(f"*{SUFFIX}")) and len(list(runs.glob("*.parquet"))) == 1
