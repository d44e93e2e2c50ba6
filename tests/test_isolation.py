"""Isolated runs (isolate:NAME, --isolate): the sandbox, the tuner's CPU clock, and tuners that misbehave."""

from __future__ import annotations

import functools

import pytest

from bat.cli import main
from bat.core.problem import Budget
from bat.registry import make_tuner
from bat.run.driver import run_tuner
from bat.run.targets import replay_target
from bat.testing import misbehaving
from bat.tuner_adapters.sandbox import Sandbox, landlock_abi


@functools.cache
def _target():
    return replay_target("coulomb")


#: seconds of silence that end an isolated tuner: its process's start (Python, bat, NumPy: over a second of
#: wall time on a loaded machine) counts toward the first, so the limit leaves it room
STALL_S = 5.0


@pytest.mark.parametrize(("cls", "says"), [
    (misbehaving.Dies, "exited with status 3 after 3 requests"),
    (misbehaving.Hangs, f"hung: the client sent nothing for {STALL_S:g} s after the last reply"),
    (misbehaving.Nonsense, "spoke nonsense: 100 malformed requests (stopped)"),
])
def test_a_misbehaving_tuner_process_gets_one_line_and_keeps_its_trace(cls, says):
    tuner = make_tuner(f"isolate:bat.testing.misbehaving:{cls.__name__}", stall_s=STALL_S)
    result = run_tuner(tuner, _target(), budget=Budget(max_evals=10), seed=0, check_data=False)
    warning = result.trace_meta["tuner_report"]["warning"]
    assert warning.startswith(f"isolate:bat.testing.misbehaving:{cls.__name__} {says}")
    assert "\n" not in warning
    assert result.evaluated == misbehaving.FIRST and len(result.trace) == misbehaving.FIRST


def test_a_campaign_goes_on_past_a_tuner_that_dies(tmp_path, capsys):
    code = main(["compare", "--tuners", "random=reference:random,dies=bat.testing.misbehaving:Dies",
                 "--benchmarks", "coulomb", "--budgets", "5", "--repeats", "2", "--no-plots", "--isolate",
                 "--out", str(tmp_path / "c")])
    out = capsys.readouterr().out
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].startswith("isolation: ")
    died = [line for line in lines if "exited with status 3" in line]
    assert len(died) == 2 and all("dies" in line for line in died)
    assert any(line.strip().startswith("random:") for line in lines)


@pytest.mark.skipif(landlock_abi() == 0, reason="this kernel has no Landlock")
def test_the_first_line_names_the_sandbox_and_the_tuner_cannot_read_the_data(tmp_path, capsys):
    code = main(["run", "--tuner", "bat.testing.exploits:OpenDataFile", "--benchmark", "coulomb", "--budget", "3",
                 "--isolate", "--out", str(tmp_path / "t.parquet")])
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines()[0].startswith(f"isolation: Landlock ABI {landlock_abi()} sandbox")


def test_without_landlock_the_line_says_so(monkeypatch):
    import bat.tuner_adapters.sandbox as sandbox

    monkeypatch.setattr(sandbox, "landlock_abi", lambda: 0)
    assert Sandbox((), ()).describe().startswith("isolation: the kernel has no Landlock")


def test_the_tuner_time_of_an_isolated_run_is_its_process_cpu_time():
    result = run_tuner(make_tuner("isolate:reference:random"), _target(), budget=Budget(max_evals=20), seed=0,
                       check_data=False)
    report = result.trace_meta["tuner_report"]
    # charged at each proposal from the process's CPU clock: all of it but what it spent after its last proposal
    assert 0 < result.tuner_s <= report["tuner_cpu_s"] + 1e-9
    assert report["tuner_cpu_s"] - result.tuner_s < 0.05


def test_the_exit_grace_stretches_with_the_load_not_below_its_idle_figure():
    from bat.tuner_adapters.isolated import EXIT_GRACE_S, exit_grace_s

    assert exit_grace_s(load=0.1, cpus=2) == EXIT_GRACE_S  # idle: the plain grace
    assert exit_grace_s(load=2.0, cpus=2) == EXIT_GRACE_S  # every core busy once: still the plain grace
    assert exit_grace_s(load=9.0, cpus=2) == pytest.approx(EXIT_GRACE_S * 4.5)  # a fifth of a core each
    assert exit_grace_s() >= EXIT_GRACE_S
