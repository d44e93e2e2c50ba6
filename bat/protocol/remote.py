"""Any BAT tuner as a protocol client: ``python -m bat.protocol.remote TUNER [-O KEY=VALUE ...]``.

For a tuner that must run in another process or virtual environment (a
library pinned to an older version): BAT starts it with
``bat run --tuner "exec:/other/venv/bin/python -m bat.protocol.remote optuna"``
and it tunes as if in-process. The tuner sees a ``RemoteProblem``: a
``Problem`` whose space and budget are rebuilt from the hello reply and whose
every ``evaluate`` goes to the server, where the real Problem decides
(rejection, repeat, charge) and the trace is recorded; the local counts,
best result and ``exhausted`` mirror the replies; its ``facts.others`` (the
transfer prior) is fetched from the server on first use
(bat.protocol.prior.RemotePrior). The tuner's generator is
``numpy.random.default_rng(hello.seed)``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

import numpy as np

from bat.core.dataset import Status
from bat.core.errors import BatError, BudgetExhaustedError, ProtocolError, TunerError
from bat.core.problem import Answer, Backend, EvalResult, Problem, no_noise, profile_cost_s
from bat.protocol.client import Client, ServerError
from bat.protocol.hello import budget_from_problem, facts_from_problem, space_from_problem
from bat.protocol.prior import RemotePrior
from bat.registry import make_tuner


class _Server:
    """The backend of a RemoteProblem: never called, every evaluation goes to the server."""

    name = "protocol"

    def __init__(self, description: str) -> None:
        self.description = description

    def describe(self) -> str:
        return self.description

    def evaluate(self, config: Mapping[str, Any]) -> EvalResult:
        raise AssertionError("a RemoteProblem evaluates on the server")

    def with_noise(self, noise: str, seed: int) -> Backend:
        return no_noise(self, noise)

    def close(self) -> None:
        pass


class RemoteProblem(Problem):
    """The server's problem seen through ``client`` (after its hello)."""

    def __init__(self, client: Client) -> None:
        if client.problem is None:
            raise ProtocolError("no_hello", "the client has not said hello")
        info = client.problem
        super().__init__(space=space_from_problem(info), backend=_Server(info["description"]),
                         budget=budget_from_problem(info), facts=facts_from_problem(info, RemotePrior(client, info)))
        self.client = client
        self._evaluated: dict[tuple, EvalResult] = {}
        self._answer: Answer | None = None  # the proposal in flight (one at a time over the protocol)

    @property
    def exhausted(self) -> bool:
        return self.client.exhausted

    def is_evaluated(self, config: Mapping[str, Any]) -> bool:
        return self.key(config) in self._evaluated

    def evaluate(self, config: Mapping[str, Any], *, profiled: bool = False,
                 timeout_factor: float | None = None, repeats: int | None = None) -> EvalResult:
        _harness_only(timeout_factor, repeats)
        return self._ask(config, profiled).result

    @property
    def in_flight(self) -> int:
        return int(self._answer is not None)

    def submit(self, config: Mapping[str, Any], *, profiled: bool = False,
               timeout_factor: float | None = None, repeats: int | None = None) -> bool:
        """Over the protocol one proposal is in flight at a time (``slots`` is 1): evaluated now,
        handed back by ``collect``."""
        _harness_only(timeout_factor, repeats)
        if self._answer is not None:
            raise TunerError("1 proposal is in flight, the most a protocol client has: collect it first")
        try:
            self._answer = self._ask(config, profiled)
        except BudgetExhaustedError:
            return False
        return True

    def tell(self, config: Mapping[str, Any], *, timeout_factor: float | None = None) -> bool:
        """``submit`` and ``collect``: the server's Problem answers it, and its trace records it."""
        if not self.submit(config, timeout_factor=timeout_factor):
            return False
        self.collect()
        return True

    def collect(self) -> Answer:
        if self._answer is None:
            raise TunerError("no proposal in flight to collect")
        answer, self._answer = self._answer, None
        return answer

    def _ask(self, config: Mapping[str, Any], profiled: bool) -> Answer:
        key = self.key(config)  # a value outside the space fails here, as in-process
        cfg = dict(zip(self.space.names, key, strict=True))
        try:
            r = self.client.evaluate(cfg, profiled=profiled)
        except ServerError as exc:
            if exc.code == "budget_exhausted":
                raise BudgetExhaustedError(f"server: {exc.message}") from None
            raise ProtocolError(exc.code, exc.message, exc.field) from None
        result = EvalResult(config=cfg, status=Status(r["status"]), objective_ms=r["objective"],
                            times_ms=tuple(r["times"]), compile_ms=r["compile_ms"], cost_s=r["cost_s"],
                            message=r["message"], extra=r.get("extra", {}))
        self._mirror(key, result, r["kind"])
        return Answer(result, r["kind"], r["kind"] == "evaluated")

    def _mirror(self, key: tuple, result: EvalResult, kind: str) -> None:
        """The server's counts, kept here from the kind of each reply."""
        s = self.stats
        if kind == "evaluated":
            self._evaluated[key] = result
            s.evaluated += 1
            s.cost_s += result.cost_s
            s.failed += int(not result.ok)
            if result.ok and (self.best is None or result.fitness < self.best.fitness):
                self.best = result
        elif kind == "repeat":
            s.repeated += 1
        elif kind == "rejected":
            s.rejected += 1
        elif kind == "profile":
            s.profiles += 1
            s.cost_s += profile_cost_s(result)


def _harness_only(factor: float | None, repeats: int | None) -> None:
    """A timeout or fewer repeats with a proposal: not in the BAT protocol."""
    if factor is not None or repeats is not None:
        raise TunerError("a timeout or fewer repeats with a proposal is not in the BAT protocol: a protocol "
                         "client's proposals are measured in full")


def main(argv: list[str] | None = None) -> int:
    """Run one registered tuner as a client on stdin/stdout; 0 when done, 2 on a BAT error."""
    parser = argparse.ArgumentParser(prog="python -m bat.protocol.remote",
                                     description="Run a BAT tuner as a client of the BAT protocol.")
    parser.add_argument("tuner", help="a registered tuner name or package.module:Class")
    parser.add_argument("-O", "--tuner-option", action="append", default=[], metavar="KEY=VALUE",
                        help="a hyper-parameter of the tuner (repeatable)")
    parser.add_argument("--check", action="store_true",
                        help="only load the tuner and exit: 0 when it loads, 2 with one line when it cannot")
    args = parser.parse_args(argv)
    if args.check:
        try:
            make_tuner(args.tuner, args.tuner_option)
        except BatError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return 0
    client = Client.stdio()
    try:
        tuner = make_tuner(args.tuner, args.tuner_option)
        client.hello(tuner=args.tuner)
        problem = RemoteProblem(client)
        assert client.problem is not None  # said hello: RemoteProblem checks it
        tuner.tune(problem, np.random.default_rng(client.problem["seed"]))
        client.done()
    except (BatError, ServerError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
