"""How far a tuner's proposals run ahead of its results (a declared capability).

A tuner that evaluates one configuration at a time may still propose without
waiting: random search never reads a result, Optuna's TPE draws its start-up
trials at random, a model-based search evaluates an initial design first.
Such a tuner declares it as ``Tuner.runs_ahead``: ``RunsAhead(first, lag)``
says that its first ``first`` proposals depend on no result and that each
later one ignores the last ``lag`` results (it was made from the results
before them). On replayed data every result is known at once, so the tuner
still sees the same results in the same order; only the simulated clock
(bat.core.flight, bat.core.schedule) changes: proposal i is known, in
simulated time, when the last result it depends on was handed back, and its
compilation may start then. The declaration must be true (a test perturbs
the results a tuner declares it ignores and checks that its proposals do not
change); a tuner that declares nothing waits for each result.
"""

from __future__ import annotations

from dataclasses import dataclass

#: ``RunsAhead.first`` of a tuner none of whose proposals depends on a result
ALWAYS = 1 << 62


@dataclass(frozen=True)
class RunsAhead:
    """The first ``first`` proposals depend on no result; each later one ignores the last ``lag`` results."""

    first: int = 0
    lag: int = 0

    def __post_init__(self) -> None:
        for name in ("first", "lag"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"RunsAhead.{name} must be an integer >= 0, got {value!r}")

    def ignored(self, proposal: int) -> int:
        """How many of the latest results proposal number ``proposal`` (from 0) does not depend on."""
        return proposal if proposal < self.first else self.lag

    def __bool__(self) -> bool:
        return self.first > 0 or self.lag > 0


#: a tuner whose every proposal depends on every result before it (the default)
WAITS = RunsAhead()
