"""A campaign checks each target's data once (bat.campaign.execute.data_check), not once per run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import bat.data.checks as checks
from bat.campaign.design import Campaign, TunerSpec
from bat.campaign.execute import run_campaign
from bat.campaign.forked import fork_is_safe
from bat.core.problem import Budget
from bat.data.checks import DataCheck, Finding
from bat.run import driver
from bat.run.driver import run_tuner
from bat.run.targets import replay_target

RANDOM = TunerSpec.parse("reference:random")
TARGETS = (("pnpoly", "RTX_3090"), ("gemm", "RTX_3090"))


@pytest.fixture
def counted(monkeypatch, tmp_path: Path) -> Path:
    """Every data check made from now on appends the checking process's id and the dataset to a file; the
    campaign's memory of earlier checks is emptied."""
    log = tmp_path / "checks.log"
    real = checks.check_dataset

    def check_dataset(dataset, *args, **kwargs):
        with log.open("a") as f:
            f.write(f"{os.getpid()} {dataset.meta.benchmark}\n")
        return real(dataset, *args, **kwargs)

    monkeypatch.setattr(checks, "check_dataset", check_dataset)
    monkeypatch.setattr(driver, "_checked", {})
    return log


def made(log: Path) -> list[str]:
    return log.read_text().split("\n")[:-1] if log.exists() else []


def test_a_campaign_in_process_checks_each_target_once(counted: Path, tmp_path: Path) -> None:
    c = Campaign(tuners=(RANDOM,), targets=TARGETS, budgets=(6,), repeats=4)
    done = run_campaign(c, tmp_path / "out")
    assert done.executed == 8
    assert sorted(made(counted)) == sorted(f"{os.getpid()} {b}" for b, _ in TARGETS)


def test_pool_workers_inherit_the_driver_s_checks(counted: Path, tmp_path: Path) -> None:
    """The driver checks each target before it forks its workers: no worker checks again. (Where this process may
    not fork, the workers are spawned without this test's counting: it sees only that nothing is checked twice.)"""
    c = Campaign(tuners=(RANDOM,), targets=TARGETS, budgets=(6,), repeats=4)
    forks = fork_is_safe()
    done = run_campaign(c, tmp_path / "out", workers=2)
    assert done.executed == 8
    lines = made(counted)
    assert len(lines) == len(set(lines))
    if forks:
        assert sorted(lines) == sorted(f"{os.getpid()} {b}" for b, _ in TARGETS)


def test_a_check_given_to_a_run_is_used_and_its_flags_noted(counted: Path) -> None:
    target = replay_target("pnpoly", "RTX_3090")
    given = DataCheck("pnpoly", [Finding("scale", True, "made up for this test")])
    result = run_tuner("reference:random", target, budget=Budget(max_evals=3), data_check=given)
    assert result.data_check is given and made(counted) == []
    assert result.notes == ["data check flagged this dataset: made up for this test"]
    checked = run_tuner("reference:random", target, budget=Budget(max_evals=3))  # none given: checked here
    assert made(counted) == [f"{os.getpid()} pnpoly"] and checked.data_check is not None
