"""Portable search: random and local search whose every choice follows from a seed and the problem's replies.

The same strategies are written in C++ (bat/protocol/cpp/example_tuner.cpp, a
client of the BAT protocol), so a run of the C++ example and a run of this
module with the same seed give the same trace: the test of the protocol and
of the C++ client. Nothing here uses NumPy's generator; the randomness is
SplitMix64 (Steele, Lea and Flood, 2014) seeded with the client's seed
(``library_seed(rng)`` in process, the hello reply's ``seed`` over the
protocol), and ``below(n)`` is ``next() % n``.

Configurations are tuples of value indices. ``draw()`` is one index per
parameter, in parameter order. Both strategies keep the configurations known
to be invalid and the fitness (time when ok, else infinity) of each one
evaluated, and stop when the budget is spent or every valid configuration
has been evaluated:

- ``random``: draw up to 32 distinct configurations not known yet (fewer when
  fewer are unknown), ask which are valid, evaluate the valid ones in one
  batch, in order;
- ``local``: best-improvement hill climbing with restarts. A start is the
  first drawn configuration that is unknown and valid (asked one at a time),
  evaluated alone; its neighbours differ in one parameter by one index step
  (parameters in order, the step down before the step up, those known to be
  invalid left out); those not evaluated yet are asked for validity and the
  valid ones evaluated in one batch; the search moves to the neighbour of
  lowest fitness (the first in neighbour order on ties) if it beats the
  current one, and restarts otherwise.

A batch stops where the budget does (the rest is refused), so both
strategies evaluate exactly what a one-at-a-time loop would.

Run as a protocol client: ``python -m bat.tuner_adapters.portable_search --strategy local``.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from bat.core.problem import Problem
from bat.core.tuner import Tuner, library_seed

_MASK = (1 << 64) - 1
#: candidates drawn per validity question by the random strategy
CHUNK = 32
STRATEGIES = ("random", "local")
Key = tuple[int, ...]


class SplitMix64:
    """SplitMix64: a 64-bit state advanced by a constant, output mixed by two multiply-xorshifts."""

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        return self.next() % n


class Oracle(Protocol):
    """What the strategies ask: validity, evaluations (a batch stops where the budget does), the budget."""

    @property
    def exhausted(self) -> bool: ...

    def valid(self, keys: Sequence[Key]) -> list[bool]: ...

    def evaluate(self, key: Key) -> float: ...

    def batch(self, keys: Sequence[Key]) -> list[float]: ...


@dataclass
class Search:
    """The state both strategies share (see the module docstring)."""

    oracle: Oracle
    rng: SplitMix64
    radices: tuple[int, ...]
    valid_count: int

    def __post_init__(self) -> None:
        self.fitness: dict[Key, float] = {}
        self.invalid: set[Key] = set()
        self.cardinality = math.prod(self.radices)

    def done(self) -> bool:
        return self.oracle.exhausted or len(self.fitness) >= self.valid_count

    def draw(self) -> Key:
        return tuple(self.rng.below(r) for r in self.radices)

    def known(self, key: Key) -> bool:
        return key in self.fitness or key in self.invalid

    def evaluate(self, key: Key) -> None:
        self.fitness[key] = self.oracle.evaluate(key)

    def evaluate_valid(self, keys: list[Key]) -> None:
        """Ask which of ``keys`` are valid; evaluate those in one batch (it stops where the budget does)."""
        if not keys:
            return
        flags = self.oracle.valid(keys)
        self.invalid.update(k for k, ok in zip(keys, flags, strict=True) if not ok)
        fresh = [k for k, ok in zip(keys, flags, strict=True) if ok]
        if fresh:
            self.fitness.update(zip(fresh, self.oracle.batch(fresh), strict=False))

    def random(self) -> None:
        while not self.done():
            want = min(CHUNK, self.cardinality - len(self.fitness) - len(self.invalid))
            candidates: list[Key] = []
            while len(candidates) < want:
                key = self.draw()
                if not self.known(key) and key not in candidates:
                    candidates.append(key)
            self.evaluate_valid(candidates)

    def start(self) -> Key:
        while True:
            key = self.draw()
            if self.known(key):
                continue
            if self.oracle.valid([key])[0]:
                return key
            self.invalid.add(key)

    def neighbours(self, key: Key) -> list[Key]:
        out = []
        for j, radix in enumerate(self.radices):
            for step in (-1, 1):
                i = key[j] + step
                if 0 <= i < radix:
                    out.append((*key[:j], i, *key[j + 1:]))
        return [k for k in out if k not in self.invalid]

    def local(self) -> None:
        current: Key | None = None
        while not self.done():
            if current is None:
                current = self.start()
                self.evaluate(current)
                continue
            around = self.neighbours(current)
            self.evaluate_valid([k for k in around if k not in self.fitness])
            best, best_fitness = None, self.fitness[current]
            for key in around:
                if self.fitness.get(key, math.inf) < best_fitness:
                    best, best_fitness = key, self.fitness[key]
            current = best


def run(search: Search, strategy: str) -> None:
    """Run ``strategy`` (``random`` or ``local``) until the budget is spent or the space is."""
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    getattr(search, strategy)()


# -- in process -------------------------------------------------------------------------
class _ProblemOracle:
    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.space = problem.space

    @property
    def exhausted(self) -> bool:
        return self.problem.exhausted

    def valid(self, keys: Sequence[Key]) -> list[bool]:
        return self.space.is_valid(np.array(keys, dtype=np.int64)).tolist()

    def evaluate(self, key: Key) -> float:
        return self.problem.evaluate(self.space.config(np.array(key))).fitness

    def batch(self, keys: Sequence[Key]) -> list[float]:
        out = []
        for key in keys:
            if self.problem.exhausted:
                break
            out.append(self.evaluate(key))
        return out


@dataclass(kw_only=True)
class PortableSearch(Tuner):
    """Random or local search driven by SplitMix64 (the twin of the C++ example client)."""

    strategy: str = "local"
    summary = "random or local search on a SplitMix64 stream: the twin of the C++ protocol example"
    budget_agnostic = True  # it never reads the budget, only whether it is spent

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {self.strategy!r}")

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        space = problem.space
        search = Search(_ProblemOracle(problem), SplitMix64(library_seed(rng)),
                        tuple(int(r) for r in space.radices), space.count_valid())
        run(search, self.strategy)


# -- over the protocol ------------------------------------------------------------------
class _ClientOracle:
    def __init__(self, client: Any) -> None:
        self.client = client
        params = client.problem["parameters"]
        self.names = [p["name"] for p in params]
        self.values = [p["values"] for p in params]

    @property
    def exhausted(self) -> bool:
        return self.client.exhausted

    def config(self, key: Key) -> dict[str, Any]:
        return {n: v[i] for n, v, i in zip(self.names, self.values, key, strict=True)}

    def valid(self, keys: Sequence[Key]) -> list[bool]:
        return self.client.valid([self.config(k) for k in keys])

    def evaluate(self, key: Key) -> float:
        return _fitness(self.client.evaluate(self.config(key)))

    def batch(self, keys: Sequence[Key]) -> list[float]:
        results = self.client.batch([self.config(k) for k in keys])
        return [_fitness(r) for r in results if r["kind"] != "refused"]


def _fitness(result: dict[str, Any]) -> float:
    return result["objective"] if result["status"] == "ok" and result["objective"] is not None else math.inf


def main(argv: list[str] | None = None) -> int:
    """The strategies as a protocol client on stdin/stdout."""
    from bat.protocol.client import Client

    parser = argparse.ArgumentParser(prog="python -m bat.tuner_adapters.portable_search")
    parser.add_argument("--strategy", choices=STRATEGIES, default="local")
    args = parser.parse_args(argv)
    client = Client.stdio()
    problem = client.hello(tuner=f"portable_search {args.strategy} (Python)")
    oracle = _ClientOracle(client)
    search = Search(oracle, SplitMix64(problem["seed"]), tuple(len(v) for v in oracle.values),
                    problem["valid_configurations"])
    run(search, args.strategy)
    client.done()
    client.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
