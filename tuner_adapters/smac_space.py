"""A SearchSpace as a ConfigSpace configuration space for SMAC, constraints included.

Each parameter becomes an integer hyper-parameter over the indices of its
ordered values (a constant for a single-valued parameter), so SMAC's models
see the order of the values.

Constraints become forbidden clauses. A constraint's truth depends only on
the parameters it names, so forbidding, for each constraint, exactly the
combinations of its parameters' values that violate it forbids exactly the
invalid configurations: ConfigSpace's sampling (SMAC's initial design, random
interleaving and local search) then never proposes one. The violating
combinations are found by the space engine on the constraint's own
sub-product (a SearchSpace of those parameters with that one constraint).
Combinations that differ only in the last multi-valued parameter share one
clause (``ForbiddenInClause`` on that parameter's values). A constraint whose
sub-product is larger than ``max_product`` is left out; the adapter then
answers its violations as rejections.

The number of clauses is what SMAC's cost depends on: ConfigSpace samples
configurations by rejection in batches of (clauses / hyper-parameters)^2 times
the number it wants, and SMAC's random search asks for thousands per
proposal. On the FAIR hub's ``convolution_milo`` the shared-memory
constraint (five parameters) took 372 clauses grouped on its last parameter,
393 in all for 10 hyper-parameters: batches of 1,544 times the request,
about 20 million configurations built in a 25-evaluation run (72 to 86 s of
CPU; bench/RESULTS.md, issue 45). So when the clauses outnumber the
hyper-parameters more than ``MAX_CLAUSES_PER_PARAMETER`` times, each
constraint's clauses are grouped on the parameter that gives it the fewest
(52 for that constraint, 56 in all). They forbid the same configurations;
only the batch size, and so SMAC's random draws, change. Below that bound
the grouping stays on the last parameter, as before (the tuner battery's
synthetic space has 8.4 clauses per hyper-parameter, GEMM 2.8, so their
proposals are unchanged: tests/fixtures/traces/digests.json).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from bat.core.space import SearchSpace

#: constraints over a sub-product larger than this are not expressed as forbidden clauses
MAX_PRODUCT = 4096
#: above this many clauses per hyper-parameter, each constraint's clauses are grouped on its most compact parameter
MAX_CLAUSES_PER_PARAMETER = 10


def configuration_space(space: SearchSpace, seed: int, *,
                        max_product: int = MAX_PRODUCT) -> tuple[Any, list[str]]:
    """The ``ConfigSpace.ConfigurationSpace`` of ``space`` (value indices) with its
    constraints as forbidden clauses, and the constraints (their expressions) left out.
    """
    from ConfigSpace import Constant, Integer

    valid = space.count_valid() > 0
    # ConfigSpace wants a default that no clause forbids: the first valid configuration
    default = space.unrank_valid([0])[0] if valid else np.zeros(len(space.names), np.int64)
    hps = {p.name: Integer(p.name, (0, len(p.values) - 1), default=int(d)) if len(p.values) > 1
           else Constant(p.name, 0) for p, d in zip(space.parameters, default, strict=True)}
    if not valid:  # nothing to propose: leave every constraint to the adapter
        return _space(hps.values(), [], seed), [c.expr for c in space.constraints]
    violations, unexpressed = [], []
    for constraint, expr in zip(space.constraints, space.expressions, strict=True):
        found = _violations(space, constraint, sorted(expr.names & set(space.names), key=space.names.index),
                            max_product)
        if found is None:
            unexpressed.append(constraint.expr)
        else:
            violations.append(found)
    forbidden = _forbidden(violations, hps, compact=False)
    if len(forbidden) > MAX_CLAUSES_PER_PARAMETER * len(hps):
        forbidden = _forbidden(violations, hps, compact=True)
    return _space(hps.values(), forbidden, seed), unexpressed


def _space(hps: Iterable[Any], forbidden: list[Any], seed: int) -> Any:
    from ConfigSpace import ConfigurationSpace

    cs = ConfigurationSpace(seed=seed)
    cs.add(list(hps))
    cs.add(forbidden)
    return cs


def _violations(space: SearchSpace, constraint: Any, names: list[str],
                max_product: int) -> tuple[list[str], np.ndarray] | None:
    """The multi-valued parameters of ``constraint`` and their value-index rows that violate it.

    None when its sub-product exceeds ``max_product``. The space has a valid
    configuration, so a violation involves a multi-valued parameter.
    """
    if not names:  # a constraint on constants alone holds (the space has a valid configuration)
        return [], np.zeros((0, 0), np.int64)
    params = [space.parameters[space.names.index(n)] for n in names]
    varying = [j for j, p in enumerate(params) if len(p.values) > 1]
    sub = SearchSpace(f"{space.name}:{constraint.expr}", params, [constraint],
                      constants=space.constants, problem_size=space.problem_size, source=space.source)
    if sub.cardinality > max_product:
        return None
    rows = sub.from_ids(np.arange(sub.cardinality))
    return [params[j].name for j in varying], rows[~sub.is_valid(rows)][:, varying]


def _forbidden(violations: list[tuple[list[str], np.ndarray]], hps: dict[str, Any], *, compact: bool) -> list[Any]:
    """The clauses of every constraint's violations, each clause once (two constraints may share one)."""
    forbidden, seen = [], set()
    for names, bad in violations:
        if len(bad) == 0:
            continue
        # rows that differ only in the grouped column share a clause: the last column, or with ``compact``
        # the one that leaves the fewest distinct rest-rows (ties: the last)
        group = len(names) - 1
        if compact:
            group = min(reversed(range(len(names))), key=lambda j: len(np.unique(np.delete(bad, j, axis=1), axis=0)))
        for key, clause in _grouped(names, bad, group, hps):
            if key not in seen:
                seen.add(key)
                forbidden.append(clause)
    return forbidden


def _grouped(names: list[str], bad: np.ndarray, group: int, hps: dict[str, Any]) -> list[tuple[tuple, Any]]:
    """(key, clause) pairs forbidding the rows ``bad``, one clause per combination of the other columns."""
    from ConfigSpace import ForbiddenAndConjunction, ForbiddenEqualsClause, ForbiddenInClause

    lead = [n for j, n in enumerate(names) if j != group]
    last = names[group]
    by_prefix: dict[tuple[int, ...], list[int]] = {}
    for row in bad.tolist():
        by_prefix.setdefault(tuple(row[:group] + row[group + 1:]), []).append(row[group])
    out = []
    for prefix, values in by_prefix.items():
        tail = ForbiddenInClause(hps[last], values) if len(values) > 1 else ForbiddenEqualsClause(hps[last], values[0])
        parts = [ForbiddenEqualsClause(hps[n], v) for n, v in zip(lead, prefix, strict=True)]
        clause = ForbiddenAndConjunction(*parts, tail) if parts else tail
        out.append(((tuple(lead), prefix, last, tuple(values)), clause))
    return out
