"""The Tuner contract: propose configurations to a Problem until its budget is spent.

A tuner keeps its hyper-parameters as keyword-only dataclass fields
(validated in ``__post_init__``), does no work in its constructor, and in
``tune`` loops ``while not problem.exhausted``, calling
``problem.evaluate(config)``. The problem validates, de-duplicates, charges
the budget and records the trace; the tuner never sees another rule.
Randomness comes only from the ``rng`` passed in, so the same seed gives
the same trace.

What a tuner can and cannot do is declared on its class (a subclass may
override a capability with a property when it depends on a hyper-parameter),
and read by the campaign, the CLI and the battery; no code switches on a
tuner's name:

- ``budget_agnostic``: a run with budget k equals the first k charged
  evaluations of a longer run with the same seed (the tuner never reads the
  budget), so one long run answers every smaller budget;
- ``needs_counters``: the tuner reads performance counters from the results
  (a live run then profiles every evaluation);
- ``supports_time_budget``: it stops correctly under a simulated-time budget;
- ``slow``: a run takes seconds even on a tiny space (tests mark it);
- ``proposes_batches``: it keeps several proposals in flight with
  ``problem.submit`` and ``problem.collect`` (up to ``problem.slots``), so
  parallel compile workers and devices shorten its simulated time
  (bat.core.schedule); a tuner that evaluates one at a time waits for each;
- ``runs_ahead``: how far its proposals run ahead of its results
  (``RunsAhead(first, lag)``, bat.core.ahead: the first ``first`` proposals
  depend on no result, each later one ignores the last ``lag``), so on
  parallel compile workers the clock overlaps their compiles even when the
  tuner evaluates one at a time; declared only where it is true (a test
  perturbs the ignored results and checks the proposals do not change);
- ``oracle``: the tuner needs what no real tuner has (the target's measurements, granted as
  ``problem.answer_key``; bat.core.facts declares what every other tuner may know); comparisons
  show it apart and include it only when asked (``bat compare --oracles``);
- ``battery_expected_failures``: battery checks it fails by design, each with
  the exception type it raises and the reason (``ExpectedFailure``).
"""

from __future__ import annotations

import dataclasses
import typing
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from bat.core.ahead import WAITS, RunsAhead
from bat.core.errors import InputLimitError, TunerError
from bat.core.hyperparams import HyperParam, tuner_kwargs
from bat.core.limits import loads

if TYPE_CHECKING:  # annotations only: listing tuners loads neither NumPy nor the Problem
    import numpy as np

    from bat.core.problem import Problem


@dataclass(frozen=True)
class ExpectedFailure:
    """A battery check a tuner fails by design: the exception it raises and why."""

    raises: type[BaseException]
    reason: str


class Tuner(ABC):
    """Base class of every tuner (reference strategies and library adapters)."""

    #: One line for ``bat list tuners``.
    summary: ClassVar[str] = ""
    #: How the library is driven and what differs from the common rules, if anything.
    notes: ClassVar[str] = ""
    # -- capabilities (see the module docstring) ------------------------------------
    budget_agnostic: ClassVar[bool] = False
    needs_counters: ClassVar[bool] = False
    supports_time_budget: ClassVar[bool] = True
    slow: ClassVar[bool] = False
    oracle: ClassVar[bool] = False
    proposes_batches: ClassVar[bool] = False
    runs_ahead: ClassVar[RunsAhead] = WAITS
    battery_expected_failures: ClassVar[Mapping[str, ExpectedFailure]] = {}
    #: the tunable options (bat.core.hyperparams); None: undeclared, every dataclass field is accepted
    HYPERPARAMETERS: ClassVar[tuple[HyperParam, ...] | None] = None

    @classmethod
    def hyperparameters(cls, variant: Mapping[str, Any]) -> tuple[HyperParam, ...] | None:
        """The options ``-O`` accepts and a hyper-parameter search tries, for the variant made with ``variant``."""
        return cls.HYPERPARAMETERS

    @abstractmethod
    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        """Evaluate configurations through ``problem`` until ``problem.exhausted``."""

    def run_report(self) -> dict[str, Any]:
        """What the tuner has to say about its last ``tune`` (kept in the trace metadata as
        ``tuner_report``; a ``warning`` key is shown to the user). Most tuners say nothing."""
        return {}

    def capabilities(self) -> dict[str, bool]:
        """The capability flags of this tuner object, by name (``runs_ahead``: whether it declares any)."""
        return {name: bool(getattr(self, name)) for name in CAPABILITIES}


#: Capability flags every tuner declares (``Tuner.capabilities``).
CAPABILITIES = ("budget_agnostic", "needs_counters", "supports_time_budget", "slow", "oracle", "proposes_batches",
                "runs_ahead")


@dataclass(frozen=True)
class TunerEntry:
    """A registered tuner variant: where its class lives, the arguments that make it, one line.

    ``target`` is a ``"module:Class"`` string, so listing the registry imports
    no tuning library; ``requires`` names the library a clear error asks for;
    ``oracle`` repeats the built tuner's ``oracle`` capability for the listing
    (tests/test_oracles.py checks that the two agree).
    """

    target: str
    summary: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    requires: str = ""
    oracle: bool = False


def tuner_options(cls: type[Tuner]) -> dict[str, Any]:
    """The hyper-parameters a tuner class declares (its dataclass fields) with their types."""
    if not dataclasses.is_dataclass(cls):
        return {}
    hints = typing.get_type_hints(cls)
    return {f.name: hints.get(f.name, Any) for f in dataclasses.fields(cls) if f.init}


def parse_tuner_options(cls: type[Tuner], pairs: list[str] | tuple[str, ...], where: str = "--tuner-option",
                        variant: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``["key=value", ...]`` as keyword arguments of ``cls`` (made with ``variant``), each value checked.

    Values are read as JSON where they parse (``3``, ``0.5``, ``true``, ``null``, ``"x"``) and as
    plain strings otherwise. A class that declares its hyper-parameters (``Tuner.hyperparameters``)
    accepts exactly those, each inside its range, and the result holds ``variant`` with them applied;
    otherwise every dataclass field is accepted, checked against its type. An unknown key or a bad
    value raises TunerError naming the option and what is accepted.
    """
    import json

    values: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise TunerError(f"{where} {pair!r}: expected KEY=VALUE")
        try:
            values[key] = loads(text, f"{where} {key}")
        except json.JSONDecodeError:
            values[key] = text
        except InputLimitError as exc:  # nested too deep, too many digits, NaN
            raise TunerError(str(exc)) from None
    return tuner_settings(cls, values, where, variant)


def tuner_settings(cls: type[Tuner], values: Mapping[str, Any], where: str = "--tuner-option",
                   variant: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Typed ``values`` of options as keyword arguments of ``cls`` (see ``parse_tuner_options``)."""
    params = cls.hyperparameters(variant or {})
    if params is not None:
        return tuner_kwargs(params, variant or {}, values, where, cls.__name__)
    declared = tuner_options(cls)
    out: dict[str, Any] = dict(variant or {})
    for key, value in values.items():
        if key not in declared:
            raise TunerError(f"{where} {key!r}: {cls.__name__} has no such hyper-parameter; "
                             f"valid: {', '.join(sorted(declared)) or '(none)'}")
        out[key] = _coerce(value, declared[key], f"{where} {key}")
    return out


def _coerce(value: Any, annotation: Any, where: str) -> Any:
    """``value`` as ``annotation`` (int, float, bool, str, their Optional/unions, Any)."""
    if annotation is Any:
        return value
    options = typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, _UnionType) \
        else (annotation,)
    if value is None and type(None) in options:
        return None
    for option in options:
        if option is bool and isinstance(value, bool):
            return value
        if option is int and isinstance(value, int) and not isinstance(value, bool):
            return value
        if option is float and isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if option is str and value is not None:
            return value if isinstance(value, str) else str(value)
    names = " or ".join(getattr(o, "__name__", str(o)) for o in options)
    raise TunerError(f"{where}: {value!r} is not {names}")


_UnionType = type(int | None)


def library_seed(rng: np.random.Generator) -> int:
    """A 32-bit seed for a library that takes an int, drawn from ``rng``."""
    return int(rng.integers(0, 2**31 - 1))


def class_spec(tuner: Tuner) -> str:
    """``package.module:Class`` of a tuner object, as the registry and another process import it."""
    cls = type(tuner)
    if "<locals>" in cls.__qualname__ or cls.__module__ == "__main__":
        raise TunerError(f"tuner class {cls.__qualname__} cannot be imported by another process: "
                         "define it at module level of an importable module")
    return f"{cls.__module__}:{cls.__qualname__}"


def object_options(tuner: Tuner) -> tuple[str, ...]:
    """A tuner object's hyper-parameters that differ from their defaults, as ``KEY=VALUE`` options."""
    import json

    if not dataclasses.is_dataclass(tuner):
        return ()
    out = []
    for f in dataclasses.fields(tuner):
        if not f.init:
            continue
        value = getattr(tuner, f.name)
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else dataclasses.MISSING)
        if value == default:
            continue
        try:
            out.append(f"{f.name}={json.dumps(value)}")
        except TypeError:
            raise TunerError(f"hyper-parameter {f.name} of {type(tuner).__name__} is not JSON "
                             f"({value!r}): it cannot be passed to another process") from None
    return tuple(out)
