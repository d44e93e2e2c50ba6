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
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from bat.core.space import SearchSpace

#: constraints over a sub-product larger than this are not expressed as forbidden clauses
MAX_PRODUCT = 4096


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
    forbidden, unexpressed, seen = [], [], set()
    for constraint, expr in zip(space.constraints, space.expressions, strict=True):
        clauses = _violations(space, constraint, sorted(expr.names & set(space.names),
                                                        key=space.names.index), hps, max_product)
        if clauses is None:
            unexpressed.append(constraint.expr)
            continue
        for key, clause in clauses:
            if key not in seen:
                seen.add(key)
                forbidden.append(clause)
    return _space(hps.values(), forbidden, seed), unexpressed


def _space(hps: Iterable[Any], forbidden: list[Any], seed: int) -> Any:
    from ConfigSpace import ConfigurationSpace

    cs = ConfigurationSpace(seed=seed)
    cs.add(list(hps))
    cs.add(forbidden)
    return cs


def _violations(space: SearchSpace, constraint: Any, names: list[str], hps: dict[str, Any],
                max_product: int) -> list[tuple[tuple, Any]] | None:
    """(key, forbidden clause) pairs covering the value combinations that violate ``constraint``.

    None when its sub-product exceeds ``max_product``. The space has a valid
    configuration, so a violation involves a multi-valued parameter.
    """
    from ConfigSpace import ForbiddenAndConjunction, ForbiddenEqualsClause, ForbiddenInClause

    if not names:  # a constraint on constants alone holds (the space has a valid configuration)
        return []
    params = [space.parameters[space.names.index(n)] for n in names]
    varying = [j for j, p in enumerate(params) if len(p.values) > 1]
    sub = SearchSpace(f"{space.name}:{constraint.expr}", params, [constraint],
                      constants=space.constants, problem_size=space.problem_size, source=space.source)
    if sub.cardinality > max_product:
        return None
    rows = sub.from_ids(np.arange(sub.cardinality))
    bad = rows[~sub.is_valid(rows)][:, varying]
    if len(bad) == 0:
        return []
    *lead, last = [params[j].name for j in varying]
    by_prefix: dict[tuple[int, ...], list[int]] = {}
    for row in bad.tolist():
        by_prefix.setdefault(tuple(row[:-1]), []).append(row[-1])
    out = []
    for prefix, values in by_prefix.items():
        tail = ForbiddenInClause(hps[last], values) if len(values) > 1 else ForbiddenEqualsClause(hps[last], values[0])
        parts = [ForbiddenEqualsClause(hps[n], v) for n, v in zip(lead, prefix, strict=True)]
        clause = ForbiddenAndConjunction(*parts, tail) if parts else tail
        out.append(((tuple(lead), prefix, last, tuple(values)), clause))
    return out
