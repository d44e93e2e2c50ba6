"""One protocol session: a client on a pair of byte streams drives a Problem until ``done`` or the end.

The session reads one request per line and writes one reply per line. Every
configuration goes through ``Problem.evaluate``, so validation, repeats
answered free, the budget, the tuner's time (the time between a reply and the
next evaluation) and the observers (the trace) are the in-process ones. A
malformed request gets an ``error`` reply naming the field and the session
goes on; a fresh configuration the budget no longer affords is refused (an
``error`` for ``evaluate``, a ``refused`` result inside a ``batch``) without
reaching the backend; the end of the input (the client exited or closed the
connection) ends the session like ``done`` does, with everything evaluated so
far in the trace.

``StreamTuner`` is the session as a ``Tuner`` for ``bat serve``: the streams
are given (stdin/stdout or a socket); ``bat.tuner_adapters.external`` starts a
client process and serves it the same way.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from bat.core.errors import ProtocolError
from bat.core.limits import MAX_NAME_CHARS
from bat.core.problem import Problem
from bat.core.tuner import Tuner, library_seed
from bat.protocol import PROTOCOL_VERSION, PROTOCOL_VERSIONS, hello, prior, wire
from bat.protocol.pacing import DEFAULT_IDLE_S, DEFAULT_REQUEST_S, Pacing, PeerStalled, paced_lines


@dataclass
class Outcome:
    """How a session ended: ``done`` (the client said so) or ``closed`` (its input ended)."""

    ended: str = "closed"
    hello: bool = False
    client: str = ""
    requests: int = 0
    errors: int = 0
    wall_s: float = 0.0
    stalled: str = ""  # the limit a stalled client broke (bat.protocol.pacing), "" otherwise

    def report(self) -> dict[str, Any]:
        """The session for the trace metadata (``tuner_report``), with a warning when it ended early."""
        out: dict[str, Any] = {"protocol": PROTOCOL_VERSION, "client": self.client, "ended": self.ended,
                               "requests": self.requests, "errors": self.errors}
        if self.stalled:
            out["warning"] = (f"the client {self.client or '(no hello)'} stalled after {self.requests} requests: "
                              f"{self.stalled}; the session was ended and the trace holds what it evaluated")
        elif self.ended != "done":
            out["warning"] = (f"the client {self.client or '(no hello)'} closed the connection without done "
                              f"after {self.requests} requests; the trace holds what it evaluated")
        return out


class Session:
    """Serves ``problem`` to one client; ``seed`` goes to the client in hello.

    Building the session prepares the hello reply (counting the valid
    configurations may take a while on a large space) and then restarts the
    problem's clock, so that this server-side work is not the tuner's time.
    ``transcript``, when given, receives every message both ways as JSON lines
    (``{"from": "client"|"server", "message": ...}``; a client line that is not
    JSON is kept as ``"raw"``).
    """

    def __init__(self, problem: Problem, *, seed: int, transcript: IO[str] | None = None,
                 pacing: Pacing | None = None) -> None:
        self.problem = problem
        self.pacing = pacing or Pacing()
        self.seed = seed
        self.transcript = transcript
        self.configs = wire.ConfigReader(problem.space)
        self.outcome = Outcome()
        self._problems = {v: hello.describe(problem, seed, v) for v in PROTOCOL_VERSIONS}
        self._hello = False
        self.version = 0  # the version the client's hello chose
        self.writer: IO[bytes] | None = None
        problem.start_clock()
        self._handlers: dict[str, Callable[[Any], dict[str, Any]]] = {
            "hello": self._on_hello, "evaluate": self._on_evaluate, "batch": self._on_batch,
            "valid": self._on_valid, "done": self._on_done, "prior": self._on_prior,
        }

    def run(self, reader: Iterable[bytes], writer: IO[bytes]) -> Outcome:
        """Serve the client on ``reader``/``writer`` until ``done`` or the end of its input."""
        start = time.perf_counter()
        self.writer = writer
        try:
            for line in paced_lines(reader, self.pacing):
                if not line.strip():
                    continue
                self.outcome.requests += 1
                reply = self._reply(line)
                if not self._send(reply) or self.outcome.ended == "done":
                    break
        except PeerStalled as exc:
            self.outcome.ended, self.outcome.stalled = "stalled", str(exc)
        finally:
            self.outcome.wall_s = time.perf_counter() - start
        return self.outcome

    def _reply(self, line: bytes) -> dict[str, Any]:
        ident = None
        try:
            message = wire.decode(line)
            self._log("client", message)
            ident = wire.message_id(message)
            request = wire.check(message)
            if request.type not in ("hello", "done") and not self._hello:
                raise ProtocolError("no_hello", f"send hello first (protocol {PROTOCOL_VERSIONS[0]})", "type")
            if self._hello and request.type != "hello" and wire.SINCE.get(request.type, 1) > self.version:
                raise ProtocolError("unknown_type", f"{request.type} requests need protocol "
                                    f"{wire.SINCE[request.type]}; this session said hello with {self.version}", "type")
            reply = self._handlers[request.type](request.body)
        except ProtocolError as exc:
            if exc.code == "parse_error":
                self._log("client", None, raw=line)
            self.outcome.errors += 1
            reply = wire.error(exc)
        except Exception as exc:  # the backend failed: tell the client, then stop the run
            self._send({"type": "error", "code": "server_error", "field": None, "message": f"{exc}"})
            raise
        if ident is not None:
            reply["id"] = ident
        return reply

    def _send(self, reply: dict[str, Any]) -> bool:
        self._log("server", reply)
        assert self.writer is not None
        try:
            self.writer.write(wire.encode(reply))
            self.writer.flush()
        except (BrokenPipeError, ConnectionError, ValueError):  # the client is gone (ValueError: closed file)
            return False
        return True

    def _log(self, side: str, message: Any, raw: bytes | None = None) -> None:
        if self.transcript is None:
            return
        entry = {"from": side, "raw": raw.decode(errors="replace").rstrip("\n")} if raw is not None \
            else {"from": side, "message": message}
        self.transcript.write(json.dumps(entry, separators=(",", ":")) + "\n")
        self.transcript.flush()

    # -- requests ---------------------------------------------------------------------
    def _on_hello(self, body: Any) -> dict[str, Any]:
        if body["protocol"] not in PROTOCOL_VERSIONS:
            raise ProtocolError("unsupported_protocol", f"this server speaks protocol "
                                f"{' or '.join(map(str, PROTOCOL_VERSIONS))}, not {body['protocol']}", "protocol")
        client = body.get("tuner", "")
        if len(client) > MAX_NAME_CHARS:  # it goes into the trace's metadata
            raise ProtocolError("invalid_message", f"{len(client)} characters, over the limit of {MAX_NAME_CHARS}",
                                "tuner")
        self._hello = self.outcome.hello = True
        self.outcome.client = client
        self.version = body["protocol"]
        return {"type": "hello", "protocol": self.version, "problem": self._problems[self.version]}

    def _on_evaluate(self, body: Any) -> dict[str, Any]:
        config, _ = self.configs.read(body["config"], "config")
        result = self._evaluate(config, profiled=body.get("profiled", False))
        if result["kind"] == "refused":
            raise ProtocolError("budget_exhausted", f"the budget of {self.problem.budget.describe()} is spent; "
                                "only repeats and constraint violations are still answered (free)", "config")
        return {"type": "result", "result": result, **self._state()}

    def _on_batch(self, body: Any) -> dict[str, Any]:
        configs, _ = self.configs.read_many(body["configs"], "configs")
        results = [self._evaluate(config, profiled=False) for config in configs]
        return {"type": "batch", "results": results, **self._state()}

    def _on_valid(self, body: Any) -> dict[str, Any]:
        _, rows = self.configs.read_many(body["configs"], "configs")
        flags = self.problem.space.is_valid(rows) if len(rows) else np.zeros(0, dtype=bool)
        return {"type": "valid", "valid": flags.tolist()}

    def _on_prior(self, body: Any) -> dict[str, Any]:
        return prior.page(self.problem.facts, self.problem.space, body["gpu"], body.get("offset", 0))

    def _on_done(self, body: Any) -> dict[str, Any]:
        self.outcome.ended = "done"
        s, best = self.problem.stats, self.problem.best
        return {"type": "done", "summary": {
            "evaluated": s.evaluated, "rejected": s.rejected, "repeated": s.repeated, "failed": s.failed,
            "profiles": s.profiles, "cost_s": s.cost_s, "tuner_s": s.tuner_s,
            "best": None if best is None else {"config": best.config, "objective": best.objective_ms},
        }}

    # -- helpers ----------------------------------------------------------------------
    def _evaluate(self, config: dict[str, Any], *, profiled: bool) -> dict[str, Any]:
        """The problem's answer as a wire ``result`` (the problem alone applies the budget rule)."""
        answer = self.problem.answer(config, profiled=profiled)
        if answer.kind == "refused":
            return wire.refused(self.problem)
        return wire.outcome(answer.result, answer.kind, answer.charged)

    def _state(self) -> dict[str, Any]:
        return {"left": wire.budget_left(self.problem), "exhausted": self.problem.exhausted}


@dataclass(kw_only=True)
class StreamTuner(Tuner):
    """The tuner at the other end of a connection (``bat serve``): serves it the protocol.

    ``reader``/``writer`` are the connection's byte streams (stdin/stdout or a
    socket's); the client gets the seed ``library_seed(rng)``, as a library
    adapter would.
    """

    reader: Iterable[bytes]
    writer: IO[bytes]
    transcript: IO[str] | None = None
    idle_s: float = DEFAULT_IDLE_S  # limits on a stalling client (bat.protocol.pacing)
    request_s: float = DEFAULT_REQUEST_S
    outcome: Outcome | None = field(default=None, init=False)
    summary = "a client connected to `bat serve`, speaking the BAT protocol"

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        session = Session(problem, seed=library_seed(rng), transcript=self.transcript,
                          pacing=Pacing(self.idle_s, self.request_s))
        self.outcome = session.run(self.reader, self.writer)

    def run_report(self) -> dict[str, Any]:
        return {} if self.outcome is None else self.outcome.report()
