"""The transfer prior over the protocol (version 2): hello lists the other GPUs with their public facts, the
``prior`` request pages their data, and a tuner run as ``isolate:`` or ``exec:`` reads the same
``problem.facts.others`` as in-process (the same proposals for the same seed), never the target's data."""

from __future__ import annotations

import dataclasses
import functools
import io
import json
import os
import sys
import threading

import numpy as np
import pytest

from bat.core.limits import PRIOR_PAGE_ROWS
from bat.core.problem import Budget, Problem
from bat.core.tuner import Tuner, library_seed
from bat.protocol.client import Client
from bat.protocol.prior import RemotePrior
from bat.protocol.server import Session
from bat.registry import make_tuner
from bat.run.driver import run_tuner
from bat.run.targets import Target, replay_target
from bat.testing import exploits as ex
from bat.tuner_adapters.sandbox import landlock_abi

GPUS = ("RTX_2080_Ti", "RTX_3060_laptop", "RTX_3090", "RTX_Titan")


@functools.cache
def with_prior(family: str, gpu: str) -> Target:
    targets = {g: replay_target(family, g) for g in GPUS}
    target = targets[gpu]
    others = {g: t.dataset for g, t in targets.items() if g != gpu}
    return dataclasses.replace(target, facts=dataclasses.replace(target.facts, others=others))


def serve(target: Target, lines: list[dict]) -> list[dict]:
    problem = Problem(space=target.space, backend=target.backend, budget=Budget(max_evals=5), facts=target.facts)
    out = io.BytesIO()
    Session(problem, seed=0).run(iter([json.dumps(m).encode() + b"\n" for m in lines]), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_hello_2_lists_the_other_gpus_and_their_facts_never_the_target():
    target = with_prior("pnpoly", "RTX_3090")
    v1, v2 = (serve(target, [{"type": "hello", "protocol": v}])[0]["problem"]["target"] for v in (1, 2))
    assert set(v1) == {"gpu", "cuda_cores", "measures_counters"}  # version 1 is as it was
    assert v2["gpu"] == "RTX_3090" and v2["gpu_facts"]["compute_units"] == 82
    assert [o["gpu"] for o in v2["others"]] == ["RTX_2080_Ti", "RTX_3060_laptop", "RTX_Titan"]
    titan = v2["others"][2]
    assert titan["rows"] == len(target.facts.others["RTX_Titan"].frame) and titan["gpu_facts"]["vendor"] == "NVIDIA"
    assert titan["space_hash"] == target.space.space_hash


def test_prior_pages_hold_the_other_gpus_data_in_order():
    target = with_prior("gemm", "RTX_3090")  # 17,956 rows a GPU: five pages
    data = target.facts.others["RTX_Titan"].frame
    offsets = list(range(0, len(data), PRIOR_PAGE_ROWS))
    replies = serve(target, [{"type": "hello", "protocol": 2},
                             *({"type": "prior", "gpu": "RTX_Titan", "offset": o} for o in offsets)])[1:]
    assert [r["next"] for r in replies] == [*offsets[1:], None] and len(replies) == 5
    assert all(len(r["configs"]) <= PRIOR_PAGE_ROWS and r["total"] == len(data) for r in replies)
    configs = [tuple(c) for r in replies for c in r["configs"]]
    assert configs == list(data[list(target.space.names)].itertuples(index=False, name=None))
    assert [o for r in replies for o in r["objective"]] == data["objective_ms"].tolist()


def test_the_target_and_unknown_gpus_are_refused_and_version_1_has_no_prior():
    target = with_prior("pnpoly", "RTX_3090")
    replies = serve(target, [{"type": "hello", "protocol": 2}, {"type": "prior", "gpu": "RTX_3090"},
                             {"type": "prior", "gpu": "RTX_Titan", "offset": 10**6}])
    assert [(r["code"], r["field"]) for r in replies[1:]] == [("invalid_message", "gpu"), ("invalid_message", "offset")]
    assert "not a GPU of the prior" in replies[1]["message"]
    old = serve(target, [{"type": "hello", "protocol": 1}, {"type": "prior", "gpu": "RTX_Titan"}])
    assert old[1]["code"] == "unknown_type" and "need protocol 2" in old[1]["message"]


def test_the_client_rebuilds_each_gpus_data_on_first_use():
    target = with_prior("pnpoly", "RTX_3090")
    problem = Problem(space=target.space, backend=target.backend, budget=Budget(max_evals=5), facts=target.facts)
    to_server, from_client = os.pipe()
    to_client, from_server = os.pipe()
    session = Session(problem, seed=0)
    with open(to_server, "rb") as reader, open(from_server, "wb") as writer, \
            open(to_client, "rb") as client_in, open(from_client, "wb") as client_out:
        thread = threading.Thread(target=session.run, args=(reader, writer))
        thread.start()
        client = Client(client_in, client_out)
        prior = RemotePrior(client, client.hello("test"))
        assert list(prior) == list(target.facts.others) and session.outcome.requests == 1  # nothing fetched yet
        for gpu, data in target.facts.others.items():
            got = prior[gpu]
            assert got is prior[gpu] and got.meta.gpu == gpu and got.meta.space_hash == data.meta.space_hash
            names = list(target.space.names)
            assert got.frame[names].equals(data.frame[names].reset_index(drop=True))
            assert got.frame["status"].tolist() == data.frame["status"].tolist()
            np.testing.assert_array_equal(got.ok["objective_ms"].to_numpy(), data.ok["objective_ms"].to_numpy())
        assert "RTX_3090" not in prior
        client.done()
        client.close()
        thread.join()


class Twin(Tuner):
    """A tuner run in-process with the generator an isolated or exec'd one gets (the hello's seed)."""

    def __init__(self, name: str) -> None:
        self.inner = make_tuner(name)

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        self.inner.tune(problem, np.random.default_rng(library_seed(rng)))


@pytest.mark.parametrize("name", ["transfer:best", "transfer:rank", "transfer:model"])
def test_an_isolated_transfer_tuner_gets_the_prior_and_proposes_as_in_process(name):
    target = with_prior("pnpoly", "RTX_3090")
    names = list(target.space.names)
    here = run_tuner(Twin(name), target, budget=Budget(max_evals=15), seed=3, check_data=False)
    isolated = run_tuner(f"isolate:{name}", target, budget=Budget(max_evals=15), seed=3, check_data=False)
    assert "warning" not in isolated.trace_meta["tuner_report"], isolated.trace_meta["tuner_report"]
    assert isolated.trace[names].equals(here.trace[names]) and isolated.evaluated == 15


def test_an_exec_client_gets_the_prior_too():
    target = with_prior("pnpoly", "RTX_Titan")
    names = list(target.space.names)
    here = run_tuner(Twin("transfer:rank"), target, budget=Budget(max_evals=8), seed=4, check_data=False)
    spec = f"exec:{sys.executable} -m bat.protocol.remote transfer:rank"
    external = run_tuner(spec, target, budget=Budget(max_evals=8), seed=4, check_data=False)
    assert external.trace[names].equals(here.trace[names])


KNOWLEDGE = [e for e in ex.EXPLOITS if getattr(e, "kind", "knowledge") == "knowledge"]


@pytest.mark.parametrize("exploit", KNOWLEDGE, ids=lambda e: e.__name__)
def test_with_a_prior_each_attack_on_knowledge_aims_past_it_at_the_targets_data(exploit):
    """In process (no isolation) every knowledge attack finds the target's optimum, not a prior GPU's:
    so "blocked" below means the isolation stopped it, not that it stole the wrong GPU's data."""
    target = with_prior("pnpoly", "RTX_3090")
    optimum = ex.optimum_of(target.dataset.frame, target.space)
    result = run_tuner(exploit(), target, budget=Budget(max_evals=3), seed=0, check_data=False)
    assert ex.judge(exploit, result.trace, result.trace_meta, target.space, optimum) == "succeeded"


@pytest.mark.skipif(landlock_abi() == 0, reason="this kernel has no Landlock: isolation runs without a sandbox")
@pytest.mark.parametrize("exploit", KNOWLEDGE, ids=lambda e: e.__name__)
def test_with_a_prior_no_attack_on_knowledge_reaches_the_targets_data(exploit):
    target = with_prior("pnpoly", "RTX_3090")
    optimum = ex.optimum_of(target.dataset.frame, target.space)
    assert all(ex.optimum_of(d.frame, target.space) != optimum for d in target.facts.others.values())
    tuner = make_tuner(f"isolate:{exploit.__module__}:{exploit.__name__}", stall_s=5.0)
    result = run_tuner(tuner, target, budget=Budget(max_evals=3), seed=0, check_data=False)
    assert ex.judge(exploit, result.trace, result.trace_meta, target.space, optimum) == "blocked"
