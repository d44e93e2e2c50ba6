"""The reference transfer tuners (transfer:best, transfer:rank, transfer:model): they read the prior
(``problem.facts.others``), follow the tuner contract (the battery), use the seed, refuse to run without a
prior in one line, and skip what of a prior is not a valid configuration of the target's space."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pandas as pd
import pytest

from bat.core.dataset import Dataset, DatasetMeta, make_frame
from bat.core.errors import TunerError
from bat.core.facts import TargetFacts
from bat.core.problem import Budget, Problem
from bat.core.trace import TraceRecorder
from bat.registry import make_tuner, tuner_names
from bat.run.targets import Target, replay_target
from bat.testing import TunerBattery
from bat.testing.synthetic import FakeBackend, constrained_space
from bat.tuner_adapters.transfer.prior import prior_of

TUNERS = ("transfer:best", "transfer:rank", "transfer:model")
GPUS = ("RTX_2080_Ti", "RTX_3060_laptop", "RTX_3090", "RTX_Titan")


@functools.cache
def _targets(family: str = "pnpoly") -> dict[str, Target]:
    return {gpu: replay_target(family, gpu) for gpu in GPUS}


def with_prior(gpu: str, family: str = "pnpoly") -> Target:
    """The replay target of ``gpu`` whose facts hold the other GPUs' data as its prior."""
    targets = _targets(family)
    target = targets[gpu]
    others = {g: t.dataset for g, t in targets.items() if g != gpu}
    return dataclasses.replace(target, facts=dataclasses.replace(target.facts, others=others))


def run(name: str, target: Target, seed: int, budget: int = 20, **options) -> tuple[pd.DataFrame, Problem]:
    recorder = TraceRecorder(target.space.names)
    problem = Problem(space=target.space, backend=target.backend, budget=Budget(max_evals=budget),
                      observers=[recorder], facts=target.facts)
    make_tuner(name, [f"{k}={v}" for k, v in options.items()]).tune(problem, np.random.default_rng(seed))
    trace = recorder.frame()
    return trace[trace["kind"] == "evaluated"][list(target.space.names)].reset_index(drop=True), problem


def configs(trace: pd.DataFrame) -> list[tuple]:
    return [tuple(r) for r in trace.itertuples(index=False)]


def test_the_three_are_registered():
    assert set(TUNERS) <= set(tuner_names())
    assert all(make_tuner(name).budget_agnostic for name in TUNERS)


@pytest.mark.parametrize("name", TUNERS)
def test_without_a_prior_a_one_line_error(name):
    target = replay_target("pnpoly", "RTX_3090")
    with pytest.raises(TunerError, match=f"^{name} needs a prior") as info:
        run(name, target, seed=0)
    assert "\n" not in str(info.value) and "--prior all-others" in str(info.value)


@pytest.mark.parametrize("name", TUNERS)
def test_the_same_seed_repeats_and_other_seeds_differ(name):
    target = with_prior("RTX_3090")
    first, _ = run(name, target, seed=1, budget=40)
    assert configs(first) == configs(run(name, target, seed=1, budget=40)[0])
    others = [configs(run(name, target, seed=s, budget=40)[0]) for s in (2, 3, 4)]
    assert any(o != configs(first) for o in others)


def _source_optima(target: Target) -> set[tuple]:
    out = set()
    for data in target.facts.others.values():
        ok = data.ok
        row = ok.loc[ok["objective_ms"].idxmin()]
        out.add(tuple(row[n] for n in target.space.names))
    return out


def test_best_first_evaluates_the_sources_optima_first():
    target = with_prior("RTX_Titan")
    optima = _source_optima(target)
    trace, _ = run("transfer:best", target, seed=5, budget=10)
    assert set(configs(trace)[: len(optima)]) == optima


def test_rank_transfer_starts_at_the_best_mean_rank():
    target = with_prior("RTX_Titan")
    names = list(target.space.names)
    ranks = []
    for data in target.facts.others.values():
        frame = data.frame.set_index(names)
        ok = frame["status"] == "ok"
        r = frame["objective_ms"].where(ok).rank(method="average")
        ranks.append(((r - 1) / (ok.sum() - 1)).where(ok, 1.0))
    mean = pd.concat(ranks, axis=1).mean(axis=1)
    trace, _ = run("transfer:rank", target, seed=5, budget=3)
    assert mean.loc[configs(trace)[0]] == pytest.approx(mean.min())


def _fake_other(space, gpu: str, fast: dict, n: int = 60, seed: int = 0) -> Dataset:
    """Data of a fake GPU on ``space``: ``n`` random valid configurations at 100-200 ms, ``fast`` at 1 ms."""
    rows = [space.config(r) for r in space.sample_valid(n, np.random.default_rng(seed))]
    records = [{**c, "status": "ok", "objective_ms": 100.0 + i} for i, c in enumerate(rows) if c != fast]
    records.append({**fast, "status": "ok", "objective_ms": 1.0})
    return Dataset(make_frame(space.names, records), DatasetMeta(space.name, space.space_hash, gpu), space.names)


@pytest.mark.parametrize("name", TUNERS)
def test_a_configuration_every_source_finds_fastest_comes_first(name):
    space = constrained_space()
    fast = space.config(space.sample_valid(1, np.random.default_rng(42))[0])
    facts = TargetFacts(gpu="FAKE", others={g: _fake_other(space, g, fast, seed=i)
                                            for i, g in enumerate(("FAKE_A", "FAKE_B"))})
    problem = Problem(space=space, backend=FakeBackend(), budget=Budget(max_evals=5), facts=facts)
    make_tuner(name).tune(problem, np.random.default_rng(0))
    assert problem._backend.calls[0] == fast


@pytest.mark.parametrize("name", TUNERS)
def test_prior_configurations_outside_the_space_or_invalid_are_skipped(name):
    space = constrained_space()
    fast = space.config(space.sample_valid(1, np.random.default_rng(7))[0])
    good = _fake_other(space, "FAKE_A", fast)
    invalid = next(c for c in (space.config(r) for r in space.from_ids(np.arange(space.cardinality)))
                   if not space.is_valid(space.encode([c]))[0])
    bad_rows = [{**fast, "bx": 3, "status": "ok", "objective_ms": 0.1},  # 3 is no value of bx
                {**invalid, "status": "ok", "objective_ms": 0.2}]  # violates a constraint
    frame = pd.concat([good.frame, make_frame(space.names, bad_rows)], ignore_index=True)
    facts = TargetFacts(gpu="FAKE", others={"FAKE_A": Dataset(frame, good.meta, space.names)})
    problem = Problem(space=space, backend=FakeBackend(), budget=Budget(max_evals=10), facts=facts)
    make_tuner(name).tune(problem, np.random.default_rng(0))
    assert problem.stats.rejected == 0 and problem.stats.evaluated == 10
    assert problem._backend.calls[0] == fast
    assert prior_of(problem, name).skipped == 2

    only_bad = Dataset(make_frame(space.names, bad_rows), good.meta, space.names)
    problem = Problem(space=space, backend=FakeBackend(), budget=Budget(max_evals=10),
                      facts=TargetFacts(gpu="FAKE", others={"FAKE_A": only_bad}))
    with pytest.raises(TunerError, match=r"none of the 2 configurations of the prior \(FAKE_A\) is a valid"):
        make_tuner(name).tune(problem, np.random.default_rng(0))


def test_the_prior_is_aligned_once_per_prior_and_kept_alive():
    target = with_prior("RTX_3090")
    make = lambda facts: Problem(space=target.space, backend=target.backend, budget=Budget(max_evals=1),  # noqa: E731
                                 facts=facts)
    first = prior_of(make(target.facts), "t")
    assert prior_of(make(dataclasses.replace(target.facts)), "t") is first  # the same datasets: cached
    fewer = dict(list(target.facts.others.items())[:2])
    assert prior_of(make(dataclasses.replace(target.facts, others=fewer)), "t") is not first
    assert first.sources == tuple(sorted(target.facts.others))


def test_the_model_reads_the_other_gpus_facts():
    from bat.core.gpus import gpu_facts
    from bat.tuner_adapters.transfer.model import gpu_features

    amd, nvidia = gpu_features(gpu_facts("MI250X")), gpu_features(gpu_facts("A100"))
    assert amd[0] == 1.0 and nvidia[0] == 0.0 and nvidia[1] == 108
    assert np.isnan(gpu_features(None)).all()


class TestBestFirstBattery(TunerBattery):
    def make_tuner(self):
        return make_tuner("transfer:best")


class TestRankTransferBattery(TunerBattery):
    def make_tuner(self):
        return make_tuner("transfer:rank")


class TestModelTransferBattery(TunerBattery):
    def make_tuner(self):
        return make_tuner("transfer:model")
