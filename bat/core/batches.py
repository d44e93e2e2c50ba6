"""Feeding a stream of proposals to a Problem with its slots kept full (tuners that propose batches).

``keep_full`` submits proposals while fewer than ``problem.slots`` are in
flight and the budget lasts, and collects the answers in simulated-time
order, until the stream ends or the budget is spent and nothing is left in
flight. With one compile worker and one device (one slot) this is the same
sequence of evaluations as calling ``problem.evaluate`` on each proposal,
and when no one asks for the answers none is made (``Problem.tell``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from bat.core.problem import Answer, Config, Problem


def keep_full(problem: Problem, proposals: Iterable[Config], on_answer: Callable[[Answer], None] | None = None,
              timeout_factor: float | None = None) -> None:
    """Evaluate ``proposals`` in order, up to ``problem.slots`` at once; ``on_answer`` hears each answer;
    ``timeout_factor`` goes with every proposal (bat.core.timeouts)."""
    stream = iter(proposals)
    ended, slots = False, problem.slots
    flying = problem.in_flight  # counted here: one more per proposal submitted, one less per answer
    if slots == 1 and not flying and on_answer is None:  # one at a time, the answers for the observers alone
        while not problem.exhausted:
            config = next(stream, None)
            if config is None or not problem.tell(config, timeout_factor=timeout_factor):
                return
        return
    while True:
        while not ended and flying < slots and not problem.exhausted:
            config = next(stream, None)
            ended = config is None or not problem.submit(config, timeout_factor=timeout_factor)
            flying += not ended
        if not flying:
            return
        answer = problem.collect()
        flying -= 1
        if on_answer is not None:
            on_answer(answer)
