"""What a target tells a tuner (bat.core.problem.TargetFacts): GPU, CUDA cores, launch geometry, replayed data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bat.backends.live.device import device_cores
from bat.core.benchmark import load_benchmark
from bat.core.errors import BackendError, UnknownNameError
from bat.core.facts import TargetFacts
from bat.core.gpus import cores_per_sm, cuda_cores, known_cuda_cores, normalise_capability
from bat.core.problem import Budget, Problem
from bat.core.tuner import Tuner
from bat.run.driver import run_tuner
from bat.run.targets import replay_target


def test_cuda_cores_from_sm_count_and_compute_capability():
    assert cuda_cores(68, "75") == 4352  # RTX 2080 Ti: 68 SMs of 64 cores (Turing)
    assert cuda_cores(82, "8.6") == 10496  # RTX 3090: 82 SMs of 128 (GA10x)
    assert cuda_cores(108, (8, 0)) == 6912  # A100: 108 SMs of 64 (GA100)
    assert cuda_cores(132, 90) == 16896  # H100 SXM / H200: 132 SMs of 128
    assert cores_per_sm("6.1") == 128 and cores_per_sm("6.0") == 64
    assert normalise_capability("120") == "12.0"
    with pytest.raises(UnknownNameError, match=r"unknown compute capability '1\.3'"):
        cores_per_sm("13")
    with pytest.raises(BackendError, match="0 SMs"):
        cuda_cores(0, "86")
    assert known_cuda_cores("RTX_Titan") == 4608 and known_cuda_cores("Mystery") is None


def test_device_cores_is_none_when_the_device_does_not_say():
    assert device_cores(82, "86") == 10496
    assert device_cores(None, "86") is None and device_cores(82, "25") is None  # Fermi: not listed


def test_replay_target_facts():
    target = replay_target("gemm", "RTX_3090")
    facts = target.facts
    assert (facts.gpu, facts.cuda_cores, facts.measures_counters) == ("RTX_3090", 10496, False)
    assert not hasattr(facts, "dataset") and facts.others == {}  # never the target's measurements
    assert facts.gpu_facts is not None and facts.gpu_facts.vendor == "NVIDIA"
    bench = load_benchmark("gemm")
    rows = target.space.sample_valid(5, np.random.default_rng(0))
    values = target.space.decode(rows)
    expected = [math.prod(bench.geometry(target.space.config(r))[0]) * math.prod(bench.geometry(
        target.space.config(r))[1]) for r in rows]
    np.testing.assert_array_equal(facts.threads(values), expected)
    assert replay_target("coulomb").facts.measures_counters


def test_the_driver_hands_the_targets_facts_to_the_problem():
    seen: list[TargetFacts] = []

    class Reader(Tuner):
        def tune(self, problem: Problem, rng: np.random.Generator) -> None:
            seen.append(problem.facts)
            problem.evaluate(problem.space.config(problem.space.sample_valid(1, rng)[0]))

    target = replay_target("pnpoly", "RTX_Titan")
    run_tuner(Reader(), target, budget=Budget(max_evals=1))
    assert seen == [target.facts] and seen[0].cuda_cores == 4608


def test_a_problem_without_facts_knows_nothing():
    from bat.testing.synthetic import FakeBackend, tiny_space

    facts = Problem(space=tiny_space(), backend=FakeBackend(), budget=Budget(max_evals=1)).facts
    assert facts == TargetFacts() and facts.cuda_cores is None and facts.threads is None
