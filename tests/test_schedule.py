"""The simulated clock (bat.core.schedule) against a brute-force tick-by-tick schedule and its bounds."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bat.core.schedule import Parallelism, Schedule, stream_clock


def run_schedule(jobs: list[tuple[float, float]], par: Parallelism, window: int) -> list[tuple[int, float]]:
    """(job, finish) in the order handed back, a tuner keeping ``window`` jobs in flight."""
    clock, out, todo = Schedule(par), [], iter(range(len(jobs)))
    for j in itertools.islice(todo, window):
        clock.submit(j, *jobs[j])
    while clock.in_flight:
        out.append(clock.next())
        for j in itertools.islice(todo, 1):
            clock.submit(j, *jobs[j])
    return out


def brute_force(jobs: list[tuple[int, int]], k: int, g: int, window: int) -> list[tuple[int, float]]:
    """The same policy simulated one time unit after another (integer durations).

    At every tick: results due now are handed back in submission order, each followed by the next
    submission; free workers take submitted jobs in order (nothing to compile: ready at once, no worker);
    free devices take compiled jobs by compile end, then submission order.
    """
    worker_free, device_free = [0] * k, [0] * g
    waiting: list[int] = list(range(min(window, len(jobs))))
    submitted = len(waiting)
    ready: list[tuple[int, int]] = []  # (compile end, job)
    finish: dict[int, int] = {}
    out: list[tuple[int, float]] = []
    t = 0
    while len(out) < len(jobs):
        changed = True
        while changed:
            changed = False
            for j in sorted(j for j, f in finish.items() if f == t):
                del finish[j]
                out.append((j, float(t)))
                if submitted < len(jobs):
                    waiting.append(submitted)
                    submitted += 1
                changed = True
            for j in list(waiting):
                if jobs[j][0] == 0:  # nothing to compile: no worker needed
                    end = t
                else:
                    w = next((i for i, free in enumerate(worker_free) if free <= t), None)
                    if w is None:
                        continue
                    end = worker_free[w] = t + jobs[j][0]
                waiting.remove(j)
                if jobs[j][1] == 0:
                    finish[j] = end
                else:
                    ready.append((end, j))
                changed = True
            ready.sort()
            while ready and ready[0][0] <= t:
                d = next((i for i, free in enumerate(device_free) if free <= t), None)
                if d is None:
                    break
                _, j = ready.pop(0)
                finish[j] = device_free[d] = t + jobs[j][1]
                changed = True
        t += 1
    return out


def test_hand_made_two_workers_one_device() -> None:
    # A and B compile together (0-3), C after them (3-6); A measures 3-4, B 4-5, C 6-7
    jobs = [(3.0, 1.0), (3.0, 1.0), (3.0, 1.0)]
    assert run_schedule(jobs, Parallelism(2, 1), 3) == [(0, 4.0), (1, 5.0), (2, 7.0)]
    assert run_schedule(jobs, Parallelism(1, 1), 1)[-1][1] == 12.0  # sequential: the sum


def test_a_later_short_compile_is_measured_first() -> None:
    # A: long compile; B (submitted after the quick C's result) compiles in 1 and is measured before A
    jobs = [(10.0, 2.0), (0.0, 1.0), (1.0, 1.0)]
    assert run_schedule(jobs, Parallelism(2, 1), 2) == [(1, 1.0), (2, 3.0), (0, 12.0)]


def test_compile_failure_costs_its_compile_time_only() -> None:
    assert run_schedule([(4.0, 0.0), (1.0, 2.0)], Parallelism(2, 1), 2) == [(1, 3.0), (0, 4.0)]


jobs_st = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=9)


@settings(max_examples=300, deadline=None)
@given(jobs=jobs_st, k=st.integers(1, 3), g=st.integers(1, 2), window=st.integers(1, 5))
def test_equals_the_brute_force_schedule(jobs: list[tuple[int, int]], k: int, g: int, window: int) -> None:
    floats = [(float(c), float(d)) for c, d in jobs]
    assert run_schedule(floats, Parallelism(k, g), window) == brute_force(jobs, k, g, window)


@settings(max_examples=300, deadline=None)
@given(jobs=st.lists(st.tuples(st.floats(0, 100), st.floats(0, 100)), min_size=1, max_size=30),
       k=st.integers(1, 16), g=st.integers(1, 4), window=st.integers(1, 40))
def test_makespan_bounds(jobs: list[tuple[float, float]], k: int, g: int, window: int) -> None:
    makespan = max(f for _, f in run_schedule(jobs, Parallelism(k, g), window))
    compile_total, device_total = sum(c for c, _ in jobs), sum(d for _, d in jobs)
    sequential = compile_total + device_total
    slack = 1e-9 * max(1.0, sequential)
    assert makespan <= sequential + slack  # never idle while a job could run
    assert makespan >= device_total / g - slack  # the measuring time alone
    assert makespan >= compile_total / k - slack
    assert makespan >= max(c + d for c, d in jobs) - slack
    # each job in flight is worked on by one worker or one device at a time
    assert makespan >= sequential / min(window, k + g) - slack
    if g == 1 and window <= Parallelism(k, g).slots:  # what a Problem allows in flight: never below 1/K
        assert makespan >= sequential / k - slack


@settings(max_examples=200, deadline=None)
@given(costs=st.lists(st.tuples(st.floats(0, 1e4), st.floats(0, 1e4)), min_size=1, max_size=40))
def test_one_worker_one_device_one_at_a_time_is_the_running_sum(costs: list[tuple[float, float]]) -> None:
    clock, running = Schedule(), 0.0
    for j, (c, d) in enumerate(costs):
        total = (c * 1.1 + d) / 1.1  # any float: the clock adds the total, never its parts
        clock.submit(j, c, d, total)
        running += total
        assert clock.next() == (j, running)


@pytest.mark.parametrize("bad", [0, -1, 4097, 1.5, True])
def test_parallelism_is_checked(bad: object) -> None:
    with pytest.raises(ValueError, match="compile_workers"):
        Parallelism(compile_workers=bad)  # type: ignore[arg-type]


def test_next_without_a_job_is_an_error() -> None:
    with pytest.raises(LookupError):
        Schedule().next()


@settings(max_examples=100, deadline=None)
@given(jobs=jobs_st, k=st.integers(1, 4), g=st.integers(1, 3))
def test_stream_clock_keeps_the_slots_full(jobs: list[tuple[int, int]], k: int, g: int) -> None:
    par = Parallelism(k, g)
    order, times = stream_clock([float(c) for c, _ in jobs], [float(d) for _, d in jobs],
                                [float(c + d) for c, d in jobs], par)
    assert list(zip(order, times, strict=True)) == brute_force(jobs, k, g, par.slots)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 5), st.floats(0, 5), st.floats(0, 12)), min_size=1, max_size=12))
def test_run_alone_is_submit_then_next(jobs: list[tuple[float, float, float]]) -> None:
    """One job at a time on the sequential clock: the one-step path gives the same finish times and state,
    whatever the charges (a total below the compile time, or past the parts, included)."""
    stepped, alone = Schedule(), Schedule()
    for key, (compile_s, device_s, total_s) in enumerate(jobs):
        stepped.submit(key, compile_s, device_s, total_s)
        finish = alone.run_alone(key, compile_s, device_s, total_s)
        assert stepped.next() == (key, finish)
        alone.now = max(alone.now, finish)
        assert (stepped.now, stepped._workers, stepped._devices, stepped._seq, stepped._compiled_by) == (
            alone.now, alone._workers, alone._devices, alone._seq, alone._compiled_by)


def test_run_alone_checks_the_parts() -> None:
    with pytest.raises(ValueError, match="job 3"):
        Schedule().run_alone(3, -1.0, 0.0, 0.0)
