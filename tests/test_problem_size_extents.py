"""A kernel runner is given a problem size as whole numbers (``ProblemSize.extents``), never a fraction."""

from __future__ import annotations

import pytest

from bat.core.benchmark import ProblemSize
from bat.core.errors import SpaceSpecError


def test_whole_numbers_reach_a_runner_as_ints() -> None:
    extents = ProblemSize("custom", {"N": 4096, "M": 64.0}).extents
    assert extents == {"N": 4096, "M": 64}
    assert all(type(v) is int for v in extents.values())


def test_a_fractional_size_is_refused_naming_it() -> None:
    with pytest.raises(SpaceSpecError, match=r"problem size M = 2\.5: a kernel's sizes are whole numbers"):
        ProblemSize("custom", {"N": 8, "M": 2.5}).extents  # noqa: B018
