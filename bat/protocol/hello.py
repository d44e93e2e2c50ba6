"""The problem as a protocol client sees it (the ``hello`` reply), and the space rebuilt from it.

``describe`` is what the server sends: the parameters with their ordered
values, the constraints as expressions (over the parameters, ``constants``
and ``problem_size``; the grammar of docs/DESIGN.md), the counts, the budget,
the client's seed, the objective and the target's entitled facts (its GPU,
core count, whether results carry counters; in protocol 2 also its GPU's
public specification and the prior's GPUs, bat.protocol.prior; never its
measurements). ``space_from_problem`` is the inverse a
Python client uses to check constraints locally; it verifies the space hash,
so a client never tunes a space that differs from the server's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bat.core.errors import ProtocolError
from bat.core.facts import TargetFacts
from bat.core.problem import Budget, Problem
from bat.core.space import Constraint, Parameter, SearchSpace
from bat.protocol import prior

if TYPE_CHECKING:
    from bat.core.dataset import Dataset

#: What every BAT problem optimises.
OBJECTIVE = {"name": "time", "unit": "ms", "goal": "minimize"}


def budget_kind(budget: Budget) -> str:
    """``evaluations``, ``time`` or ``evaluations_or_time`` (whichever is spent first)."""
    if budget.max_time_s is None:
        return "evaluations"
    return "time" if budget.max_evals is None else "evaluations_or_time"


def describe(problem: Problem, seed: int, version: int = 1) -> dict[str, Any]:
    """The ``problem`` object of the hello reply in protocol ``version`` (2 adds the GPU facts and the prior)."""
    space, budget = problem.space, problem.budget
    out: dict[str, Any] = {
        "space": space.name,
        "backend": problem.backend_name,
        "description": problem.describe_backend(),
        "parameters": [{"name": p.name, "values": list(p.values)} for p in space.parameters],
        "constraints": [c.expr for c in space.constraints],
        "constants": dict(space.constants),
        "problem_size": dict(space.problem_size),
        "cardinality": space.cardinality,
        "valid_configurations": space.count_valid(),
        "space_hash": space.space_hash,
        "budget": {"kind": budget_kind(budget), "evaluations": budget.max_evals, "seconds": budget.max_time_s},
        "seed": seed,
        "objective": dict(OBJECTIVE),
        "target": {"gpu": problem.facts.gpu, "cuda_cores": problem.facts.cuda_cores,
                   "measures_counters": problem.facts.measures_counters},
    }
    if version >= 2:
        out["target"]["gpu_facts"] = prior.gpu_facts_message(problem.facts.gpu_facts)
        out["target"]["others"] = prior.others_message(problem.facts)
    return out


def space_from_problem(problem: Mapping[str, Any]) -> SearchSpace:
    """The search space a hello reply describes (ProtocolError when its hash differs)."""
    space = SearchSpace(
        problem["space"],
        [Parameter(p["name"], tuple(p["values"])) for p in problem["parameters"]],
        [Constraint(expr, path=f"constraints[{i}]") for i, expr in enumerate(problem["constraints"])],
        constants=problem["constants"], problem_size=problem["problem_size"], source="hello.problem",
    )
    if space.space_hash != problem["space_hash"]:
        raise ProtocolError("invalid_message", f"the space rebuilt here hashes to {space.space_hash}, the "
                            f"server's to {problem['space_hash']}", "problem.space_hash")
    return space


def facts_from_problem(problem: Mapping[str, Any],
                       others: Mapping[str, Dataset] | None = None) -> TargetFacts:
    """The entitled facts a hello reply states (bat.core.facts; the GPU's specification by its id), with
    ``others``, the prior as the client reads it (bat.protocol.prior.RemotePrior), when given."""
    from bat.core.gpus import gpu_facts

    t = problem.get("target") or {}
    gpu = t.get("gpu", "")
    return TargetFacts(gpu=gpu, cuda_cores=t.get("cuda_cores"), measures_counters=bool(t.get("measures_counters")),
                       gpu_facts=gpu_facts(gpu) if gpu else None, others=others or {})


def budget_from_problem(problem: Mapping[str, Any]) -> Budget:
    """The budget a hello reply states."""
    b = problem["budget"]
    return Budget(max_evals=b["evaluations"], max_time_s=b["seconds"])
