"""The Problem: one benchmark's space behind one backend, under one budget.

The problem owns evaluation: it checks a proposed configuration against the
space, never lets a constraint-violating one reach the backend, answers a
repeated proposal from memory, charges the budget, measures the tuner's own
time between proposals, and tells its observers (the trace recorder is one).
A tuner only proposes and observes; what it may know of the target beyond
the space and budget it reads from ``problem.facts`` (declared in
bat.core.facts), never from the backend, which the problem keeps private.
``answer`` gives a caller everything about one proposal (the result, its
kind, whether it was charged); ``evaluate`` is its result for tuners.

Time is the simulated clock of bat.core.schedule: K configurations compile
at once and each of G devices measures one at a time (``parallelism``). A
tuner that evaluates one configuration at a time waits for each result, so
its clock is the sum of the charges whatever K and G, unless it declares that
its proposals run ahead of its results (``runs_ahead``, bat.core.ahead): then
a proposal enters the clock when the last answer it depends on came, and its
compilation overlaps the answers it ignored. A tuner that declares
``proposes_batches`` keeps up to ``slots`` proposals in flight with
``submit`` and receives their answers with ``collect``, in the order they
finish in simulated time; observers hear of each answer then. The budget
counts distinct configurations when they are submitted and simulated
seconds on the clock. A proposal may carry a timeout factor (its
measurement stops past that factor x the best so far, bat.core.timeouts)
or ask for fewer of the recorded repeats (a partial measurement: time on
the clock, no evaluation of the budget, bat.core.fidelity).

The run closes the problem when ``tune()`` returns (``close``): a later
proposal (a thread the tuner left running) raises ProblemClosedError, never
reaches the backend or the observers, and is counted in ``stats.after_close``.
Proposals are answered one at a time (a lock), so none is half-way through
when the problem closes.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from bat.core.ahead import WAITS, RunsAhead
from bat.core.dataset import Status
from bat.core.errors import BackendError, BudgetExhaustedError, ProblemClosedError, TunerError
from bat.core.facts import TargetFacts
from bat.core.fidelity import check_repeats, fewer_repeats
from bat.core.flight import InFlight
from bat.core.frozen import made
from bat.core.indexed_config import IndexedConfig
from bat.core.schedule import SEQUENTIAL, Parallelism
from bat.core.space import SearchSpace
from bat.core.timeouts import check_factor, cut_off

if TYPE_CHECKING:

    from bat.core.dataset import Dataset

Config = Mapping[str, Any]


@dataclass(frozen=True)
class EvalResult:
    """What evaluating one configuration gave."""

    config: dict[str, Any]
    status: Status
    objective_ms: float | None = None
    times_ms: tuple[float, ...] = ()
    compile_ms: float | None = None
    cost_s: float = 0.0  # the whole charge: compile_s + verify_s + the measurement (measure_s)
    message: str = ""
    extra: Mapping[str, float] = field(default_factory=dict)
    compile_s: float = 0.0  # the part of cost_s spent compiling (on a compile worker, bat.core.schedule)
    verify_s: float = 0.0  # the part spent verifying the output (on the device)

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    @property
    def measure_s(self) -> float:
        """The part of ``cost_s`` spent measuring (on the device)."""
        return max(0.0, self.cost_s - self.compile_s - self.verify_s)

    @property
    def device_s(self) -> float:
        """The part of ``cost_s`` spent on the device: verification and measurement."""
        return max(0.0, self.cost_s - self.compile_s)

    @property
    def fitness(self) -> float:
        """Objective for minimisation: infinity for anything that is not ok."""
        return float(self.objective_ms) if self.ok and self.objective_ms is not None else float("inf")


class Backend(Protocol):
    """Something that evaluates configurations: replay, live GPU, a command.

    One whose every result holds its own copy of the configuration may say so with a class attribute
    ``copies_config = True`` (the replay backend): the Problem then hands it a configuration the space made
    as the tuner proposed it, without copying it first.
    """

    name: str

    def describe(self) -> str:
        """One line for the user: what is being evaluated, and how."""
        ...

    def evaluate(self, config: Config) -> EvalResult: ...

    def with_noise(self, noise: str, seed: int) -> Backend:
        """This backend with its objective drawn under the noise mode ``noise`` (bat.backends.replay.NOISE_MODES)
        from ``seed``. Only recorded data has repeats to draw from: any other backend answers "none" with itself
        and refuses the rest (``no_noise``)."""
        ...

    def close(self) -> None: ...


B = TypeVar("B", bound=Backend)


def no_noise(backend: B, noise: str) -> B:
    """``Backend.with_noise`` of a backend with no recorded repeats: itself for "none", else a BackendError."""
    if noise != "none":
        raise BackendError(f"noise {noise!r}: the {backend.name} backend has no recorded repeats to draw noise from "
                           "(only replay has)")
    return backend


class Observer(Protocol):
    """Told about every proposal the problem answers."""

    def on_result(self, event: Event) -> None: ...


@dataclass(frozen=True)
class Answer:
    """Everything about one proposal: its result, its kind and whether it was charged."""

    result: EvalResult
    kind: str  # "evaluated", "rejected", "repeat", "profile", "partial" or "refused" (the budget is spent)
    charged: bool


@dataclass(frozen=True)
class Event:
    """One answered proposal, as observers see it."""

    step: int
    result: EvalResult
    kind: str  # "evaluated", "rejected" (constraint violation), "repeat", "profile" or "partial"
    charged: bool
    tuner_s: float
    best_so_far_ms: float | None
    elapsed_cost_s: float
    profiled: bool = False


@dataclass
class Budget:
    """Distinct valid configurations to evaluate and/or simulated seconds to spend."""

    max_evals: int | None = None
    max_time_s: float | None = None

    def __post_init__(self) -> None:
        if self.max_evals is None and self.max_time_s is None:
            raise ValueError("a budget needs max_evals or max_time_s")
        if self.max_evals is not None and self.max_evals < 1:
            raise ValueError(f"max_evals must be >= 1, got {self.max_evals}")
        if self.max_time_s is not None and not 0 < self.max_time_s < math.inf:  # nan is no limit
            raise ValueError(f"max_time_s must be finite and > 0, got {self.max_time_s}")

    def progress(self, evals: int, cost_s: float) -> float:
        """Fraction of the budget spent, in [0, 1] (drives progress bars)."""
        parts = []
        if self.max_evals is not None:
            parts.append(evals / self.max_evals)
        if self.max_time_s is not None:
            parts.append(cost_s / self.max_time_s)
        return min(1.0, max(parts))

    def describe(self) -> str:
        parts = []
        if self.max_evals is not None:
            parts.append(f"{self.max_evals} evaluations")
        if self.max_time_s is not None:
            parts.append(f"{self.max_time_s:g} s simulated time")
        return " or ".join(parts)


@dataclass
class ProblemStats:
    """Counts every run reports: what was evaluated, rejected, repeated, and the tuner's time."""

    evaluated: int = 0
    rejected: int = 0
    repeated: int = 0
    failed: int = 0
    profiles: int = 0  # extra profiled runs of configurations first run without counters
    partial: int = 0  # measurements with fewer repeats (bat.core.fidelity): time charged, no evaluation
    tuner_s: float = 0.0
    cost_s: float = 0.0  # the work charged: the sum of every evaluation's cost
    after_close: int = 0  # proposals refused because they came after tune() returned
    clock_s: float = 0.0  # the simulated clock (bat.core.schedule): cost_s when evaluations run one at a time

    @property
    def proposals(self) -> int:
        return self.evaluated + self.rejected + self.repeated

    @property
    def invalid_rate(self) -> float:
        """Share of proposals that violated a constraint."""
        return self.rejected / self.proposals if self.proposals else 0.0


class Problem:
    """Evaluates configurations of ``space`` through ``backend`` under ``budget``."""

    def __init__(
        self,
        *,
        space: SearchSpace,
        backend: Backend,
        budget: Budget,
        observers: Iterable[Observer] = (),
        facts: TargetFacts | None = None,
        tuner_charge_s: float | None = None,
        tuner_clock: Callable[[], float] = time.perf_counter,
        parallelism: Parallelism = SEQUENTIAL,
        timeout_factor: float | None = None,
        draw_seed: int = 0,
        runs_ahead: RunsAhead = WAITS,
    ) -> None:
        if tuner_charge_s is not None and not 0 <= tuner_charge_s < math.inf:
            raise ValueError(f"tuner_charge_s must be finite and >= 0, got {tuner_charge_s}")
        self.space = space
        self._backend = backend
        self.budget = budget
        self.facts = facts or TargetFacts()
        self.observers = list(observers)
        self.stats = ProblemStats()
        self.best: EvalResult | None = None
        self._seen: dict[int, EvalResult] = {}  # flat id -> its answer
        self._profiled: set[int] = set()
        self._step = 0
        self._clock: float | None = None
        self._pending_s = 0.0
        #: seconds charged as the tuner's time per proposal (a declared cost model), None: measured
        self.tuner_charge_s = tuner_charge_s
        #: what measures the tuner's time when no charge is declared (wall clock, or a process's CPU time)
        self.tuner_clock = tuner_clock
        #: the target's measurements, granted by the driver to a declared oracle only (Tuner.oracle)
        self.answer_key: Dataset | None = None
        self._lock = threading.RLock()
        self._closed = False
        #: compile workers and devices of the simulated clock (bat.core.schedule)
        self.parallelism = parallelism
        #: measurements past this factor x the best time so far are stopped (bat.core.timeouts); None: never
        self.timeout_factor = check_factor(timeout_factor)
        #: seeds the draws of partial measurements (bat.core.fidelity): the run's seed
        self.draw_seed = int(draw_seed)
        #: how far the tuner's proposals run ahead of its results (bat.core.ahead), from its declaration
        self.runs_ahead = runs_ahead
        self._partial: dict[tuple[int, int], EvalResult] = {}  # (flat id, repeats) -> partial answer
        #: job -> (result, kind, charged, tuner time, profiled) of each answer to come
        self._flight: InFlight[tuple[EvalResult, str, bool, float, bool]] = InFlight(parallelism)
        self._names = tuple(space.names)
        self._index_of = [{_plain(v): i for i, v in enumerate(p.values)} for p in space.parameters]
        self._strides = tuple(space.strides.tolist())
        self._slots = parallelism.slots
        #: the backend's results hold their own copy of the configuration (``copies_config``): a configuration the
        #: space made is handed to it as the tuner proposed it, and copied only where the Problem keeps it itself
        self._borrows = bool(getattr(backend, "copies_config", False))

    # -- state the tuner reads ---------------------------------------------
    @property
    def exhausted(self) -> bool:
        b, s = self.budget, self.stats
        return (b.max_evals is not None and s.evaluated >= b.max_evals) or (
            b.max_time_s is not None and s.clock_s >= b.max_time_s
        )

    @property
    def remaining(self) -> int | None:
        """Evaluations left, when the budget counts evaluations."""
        if self.budget.max_evals is None:
            return None
        return max(0, self.budget.max_evals - self.stats.evaluated)

    @property
    def progress(self) -> float:
        return self.budget.progress(self.stats.evaluated, self.stats.clock_s)

    def is_evaluated(self, config: Config) -> bool:
        if type(config) is IndexedConfig and config.flat >= 0 and config.space is self.space:  # indexed_in, inlined
            return config.flat in self._seen
        return self._placed(config).flat in self._seen

    def is_evaluated_id(self, flat: int) -> bool:
        """Whether the configuration of flat id ``flat`` in ``space`` (``SearchSpace.to_ids``) was evaluated: a
        sampler checks its draws so before it makes their configurations."""
        return flat in self._seen

    def key(self, config: Config) -> tuple[Any, ...]:
        """The configuration as a tuple of values in parameter order (checked)."""
        return tuple(self._placed(config).values())

    def _placed(self, config: Config, *, borrow: bool = False) -> IndexedConfig:
        """A fresh copy of a configuration (checked) that carries its value indices and flat id.

        One the space made (an unchanged IndexedConfig) is copied with what it carries (``borrow``: itself,
        not copied); any other mapping is checked value by value (NumPy scalars as Python values).
        """
        if type(config) is IndexedConfig and config.flat >= 0 and config.space is self.space:  # indexed_in, inlined
            return config if borrow else config.copy()
        if len(config) != len(self._names) or any(n not in config for n in self._names):
            raise TunerError(
                f"configuration has parameters {sorted(config)}, space {self.space.name} has {list(self._names)}"
            )
        values, row = {}, []
        for name, index in zip(self._names, self._index_of, strict=True):
            value = config[name]
            if isinstance(value, np.generic):
                value = value.item()
            i = index.get(value) if value.__hash__ is not None else None
            if i is None:
                raise TunerError(f"value {value!r} of {name} is not in the space {self.space.name}")
            values[name] = value
            row.append(i)
        flat = sum(i * s for i, s in zip(row, self._strides, strict=True))
        return IndexedConfig(values, self.space, tuple(row), flat, None)

    def _valid(self, cfg: IndexedConfig) -> bool:
        """Whether the constraints allow ``cfg`` (from what it carries when the space checked it)."""
        return cfg.valid if cfg.valid is not None else self.space.is_valid_one(cfg.row)

    # -- evaluation ----------------------------------------------------------
    def evaluate(self, config: Config, *, profiled: bool = False, timeout_factor: float | None = None,
                 repeats: int | None = None) -> EvalResult:
        """The result of one configuration for a tuner; a spent budget raises BudgetExhaustedError.

        ``timeout_factor``: stop its measurement past this factor x the best time so far
        (bat.core.timeouts; the run's own factor, when lower, holds). ``repeats``: a partial
        measurement with that many of the recorded repeats (bat.core.fidelity).
        """
        answer = self.answer(config, profiled=profiled, timeout_factor=timeout_factor, repeats=repeats)
        if answer.kind == "refused":
            raise BudgetExhaustedError(
                f"budget of {self.budget.describe()} is spent; tuners must check problem.exhausted"
            )
        return answer.result

    def answer(self, config: Config, *, profiled: bool = False, timeout_factor: float | None = None,
               repeats: int | None = None) -> Answer:
        """Everything about one proposal (see the module docstring for the rules).

        A fresh valid configuration the spent budget no longer affords is ``refused``: it
        never reaches the backend, costs nothing and is not told to the observers. After
        ``close`` every proposal raises ProblemClosedError.
        """
        with self._lock:
            refused = self._start_alone(config, profiled, timeout_factor, repeats)
            return refused if refused is not None else self._collect()

    def tell(self, config: Config, *, timeout_factor: float | None = None) -> bool:
        """``answer`` for a tuner that reads no answer: the observers alone hear it (no Answer is made; the
        batches of bat.core.batches on one slot). False: the budget is spent (``refused``, nothing told)."""
        with self._lock:
            if self._start_alone(config, False, timeout_factor, None) is not None:
                return False
            self._answered()
            return True

    def _start_alone(self, config: Config, profiled: bool, timeout_factor: float | None,
                     repeats: int | None) -> Answer | None:
        """``_start`` of a proposal evaluated alone (nothing may be in flight)."""
        self._check_open()
        if self._flight:
            raise TunerError("collect the submitted evaluations (problem.collect) before evaluating one alone")
        return self._start(config, profiled, timeout_factor, repeats)

    def close(self) -> None:
        """End the run: every later proposal is refused (see the module docstring)."""
        with self._lock:
            self._closed = True

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            self.stats.after_close += 1
            raise ProblemClosedError(f"proposal after the tuner's tune() returned (the run is over): "
                                     f"{self.stats.after_close} refused so far")

    # -- batches (tuners that declare proposes_batches) -------------------------
    @property
    def slots(self) -> int:
        """Proposals a tuner may keep in flight (``submit`` before ``collect``): K + G - 1."""
        return self.parallelism.slots

    @property
    def in_flight(self) -> int:
        """Proposals submitted whose answers ``collect`` has not handed back yet."""
        return len(self._flight)

    def submit(self, config: Config, *, profiled: bool = False, timeout_factor: float | None = None,
               repeats: int | None = None) -> bool:
        """Start evaluating ``config``; its answer comes from ``collect``. False: the budget is spent.

        At most ``slots`` proposals may be in flight; one more raises TunerError.
        """
        with self._lock:
            self._check_open()
            if len(self._flight) >= self._slots:
                raise TunerError(f"{len(self._flight)} proposals are in flight, the most this run allows "
                                 f"({self.parallelism.describe()}): collect one first")
            return self._start(config, profiled, timeout_factor, repeats) is None

    def collect(self) -> Answer:
        """The answer of the submitted proposal that finishes first in simulated time; the clock moves there."""
        with self._lock:
            self._check_open()
            return self._collect()

    def _collect(self) -> Answer:
        result, kind, charged = self._answered()
        return made(Answer, result=result, kind=kind, charged=charged)

    def _answered(self) -> tuple[EvalResult, str, bool]:
        """Hand the first answer to finish to the observers (the clock moves there): its result, kind and charge."""
        if not self._flight:
            raise TunerError("no proposal in flight to collect")
        result, kind, charged, tuner_s, profiled = self._flight.take()
        self.stats.clock_s = self._flight.now
        best = self.best
        if charged and result.status is Status.OK and (best is None or _fitness(result) < _fitness(best)):
            self.best = best = result
        event = made(Event, step=self._step, result=result, kind=kind, charged=charged, tuner_s=tuner_s,
                     best_so_far_ms=best.objective_ms if best is not None else None,
                     elapsed_cost_s=self.stats.clock_s, profiled=profiled)
        self._step += 1
        for obs in self.observers:
            obs.on_result(event)
        self._clock_mark()
        return result, kind, charged

    def _start(self, config: Config, profiled: bool, timeout_factor: float | None = None,
               repeats: int | None = None) -> Answer | None:
        """Check, charge and schedule one proposal; the answer of a refused one (nothing scheduled)."""
        if repeats is not None:
            check_repeats(repeats)
        factor = self.timeout_factor
        if timeout_factor is not None:
            factor = min(check_factor(timeout_factor) or math.inf, factor or math.inf)
        # a measurement cut off at the best so far starts once the answers before it came: it runs no earlier
        ahead = self.runs_ahead.ignored(self._step) if factor is None and self._slots > 1 and self.runs_ahead else 0
        tuner_s = self._lap()
        cfg = self._placed(config, borrow=self._borrows)
        key, row = cfg.flat, cfg.row
        job: Hashable = key  # what the answer measures or waits for on the clock
        compile_s = device_s = total_s = 0.0
        if profiled and self._flight.measuring(key):
            raise TunerError("a configuration is profiled after its answer has come, not while it is in flight")
        if key in self._seen and profiled and key not in self._profiled:
            # One more run, with the profiler: it costs device time but is no new configuration.
            result, kind, charged = self._seen[key], "profile", False
            self._profiled.add(key)
            self.stats.profiles += 1
            device_s = total_s = profile_cost_s(result)
            self.stats.cost_s += total_s
        elif key in self._seen:
            self.stats.repeated += 1
            result, kind, charged = self._seen[key], "repeat", False
        elif not self._valid(cfg):
            self.stats.rejected += 1
            result = EvalResult(config=cfg if cfg is not config else cfg.copy(), status=Status.CONSTRAINT_VIOLATION,
                                message="violates a constraint")
            kind, charged = "rejected", False
        elif self.exhausted:
            self.stats.tuner_s -= tuner_s  # not a proposal: its time is the next one's
            self._pending_s += tuner_s
            self._clock_mark()
            return Answer(EvalResult(config=cfg if cfg is not config else cfg.copy(), status=Status.MISSING,
                                     message=f"the budget of {self.budget.describe()} is spent"), "refused", False)
        elif repeats is not None and (key, repeats) in self._partial:
            self.stats.repeated += 1
            result, kind, charged = self._partial[key, repeats], "repeat", False
            job = (key, repeats)  # it waits for that partial measurement, if in flight
        else:
            measured = self._backend.evaluate(cfg)
            partial = (fewer_repeats(measured, repeats, self.draw_seed, row)
                       if repeats is not None and getattr(self._backend, "recorded", False) else None)
            if partial is not None and repeats is not None:  # drawn only with repeats
                result, kind, charged = partial, "partial", False
                self._partial[key, repeats] = partial
                self.stats.partial += 1
                self.stats.cost_s += partial.cost_s
                compile_s, device_s, total_s = partial.compile_s, partial.device_s, partial.cost_s
                self._schedule_job(result, kind, charged, tuner_s, profiled, (key, repeats), compile_s,
                                   device_s, total_s, ahead)
                return None
            result = measured if factor is None else cut_off(measured, factor,
                                                             self.best.objective_ms if self.best else None)
            self._seen[key] = result
            if profiled:
                self._profiled.add(key)
            self.stats.evaluated += 1
            self.stats.cost_s += result.cost_s
            if not result.ok:
                self.stats.failed += 1
            kind, charged = "evaluated", True
            total_s, compile_s = result.cost_s, result.compile_s
            device_s = max(0.0, total_s - compile_s)  # result.device_s, inlined: once per evaluation
        self._schedule_job(result, kind, charged, tuner_s, profiled, job, compile_s, device_s, total_s, ahead)
        return None

    def _schedule_job(self, result: EvalResult, kind: str, charged: bool, tuner_s: float, profiled: bool,
                      key: Hashable, compile_s: float, device_s: float, total_s: float, ahead: int = 0) -> None:
        """Put one answered proposal on the clock (bat.core.flight); ``key`` names what it measures
        (a partial measurement: the configuration and its repeats) or what it repeats; ``ahead``: the
        latest answers it ignored."""
        self._flight.add((result, kind, charged, tuner_s, profiled), key, measures=kind in ("evaluated", "partial"),
                         compile_s=compile_s, device_s=device_s, total_s=total_s, ahead=ahead)
        if self._slots > 1:  # one slot: the answer is collected before the next proposal, and marks the clock then
            self._clock_mark()

    def _lap(self) -> float:
        """The tuner's time since the last answer: the declared charge, else its clock's reading."""
        if self.tuner_charge_s is not None:
            tuner_s = self.tuner_charge_s
        else:
            now = self.tuner_clock()
            tuner_s = now - self._clock if self._clock is not None else 0.0
            if getattr(self.tuner_clock, "counts_waiting", False):
                self._clock = now  # the answer's time is the next lap's (see _clock_mark)
        tuner_s += self._pending_s
        self._pending_s = 0.0
        self.stats.tuner_s += tuner_s
        return tuner_s

    def _clock_mark(self) -> None:
        """Mark the answer: the next lap counts from here. A clock with ``counts_waiting`` (the CPU time of
        another process: bat.tuner_adapters.tree_clock) is not read again; what the tuner spends while the
        harness answers is then the next lap's, and one reading per proposal does."""
        if self.tuner_charge_s is None and not getattr(self.tuner_clock, "counts_waiting", False):
            self._clock = self.tuner_clock()

    @property
    def backend_name(self) -> str:
        """The backend's name, for the harness (run metadata, the protocol's hello)."""
        return self._backend.name

    def describe_backend(self) -> str:
        """The backend's one-line description, for the harness."""
        return self._backend.describe()

    def start_clock(self) -> None:
        """Start timing the tuner (called by the driver just before ``tune``)."""
        self._pending_s = 0.0
        if self.tuner_charge_s is None:
            self._clock = self.tuner_clock()


def profile_cost_s(result: EvalResult) -> float:
    """Seconds a profiled re-run costs: the recorded profiled-run time, else the run's own cost."""
    if "profile_ms" in result.extra:
        return float(result.extra["profile_ms"]) / 1000.0
    return result.cost_s


def _fitness(ok: EvalResult) -> float:
    """``ok.fitness`` of a result whose status is ok (the property, inlined: twice per evaluation)."""
    objective = ok.objective_ms
    return float(objective) if objective is not None else math.inf


def _plain(value: Any) -> Any:
    """NumPy scalars to Python scalars, so keys compare and hash as plain values."""
    return value.item() if isinstance(value, np.generic) else value
