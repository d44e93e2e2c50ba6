"""bat.core.frozen.made gives the object a frozen dataclass's __init__ gives, still frozen."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from bat.core.dataset import Status
from bat.core.frozen import made
from bat.core.problem import Answer, EvalResult, Event


def test_made_equals_init_and_stays_frozen() -> None:
    fields = dict(config={"a": 1}, status=Status.OK, objective_ms=2.0, times_ms=(2.0,), compile_ms=None, cost_s=0.5,
                  message="", extra={}, compile_s=0.1, verify_s=0.0)
    fast, slow = made(EvalResult, **fields), EvalResult(**fields)
    assert fast == slow and repr(fast) == repr(slow) and fast.fitness == 2.0
    assert pickle.loads(pickle.dumps(fast)) == slow
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.cost_s = 1.0  # type: ignore[misc]
    event = dict(step=0, result=fast, kind="evaluated", charged=True, tuner_s=0.0, best_so_far_ms=2.0,
                 elapsed_cost_s=0.5, profiled=False)
    assert made(Event, **event) == Event(**event)
    assert made(Answer, result=fast, kind="repeat", charged=False) == Answer(fast, "repeat", False)
    assert made(Answer, result=fast, kind="repeat", charged=False) != Answer(fast, "evaluated", False)
