"""The protocol server (bat.protocol): a scripted client against a Session on a small space.

Each test feeds request lines to a session and reads its replies; the
Problem behind it is the ordinary one with a trace recorder attached, so
the rules (validation, repeats free, the budget, the trace) are the
in-process ones.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from bat.core.dataset import Status
from bat.core.problem import Budget, EvalResult, Problem
from bat.core.space import Constraint, Parameter, SearchSpace
from bat.core.trace import TRACE_COLUMNS, TraceRecorder
from bat.protocol.server import Session

SPACE = SearchSpace("toy", [Parameter("bx", (1, 2, 4, 8)), Parameter("ratio", (0.5, 1.0)),
                            Parameter("layout", ("row", "col"))],
                    [Constraint("bx * ratio >= 1")])
A = {"bx": 2, "ratio": 0.5, "layout": "row"}
B = {"bx": 4, "ratio": 1.0, "layout": "col"}
C = {"bx": 8, "ratio": 1.0, "layout": "row"}
INVALID = {"bx": 1, "ratio": 0.5, "layout": "row"}


class Toy:
    """Backend: time = bx * ratio (+1 for col); bx = 8 with ratio 0.5 fails."""

    name = "toy"

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def describe(self) -> str:
        return "toy backend"

    def evaluate(self, config):
        self.calls.append(dict(config))
        if config["bx"] == 8 and config["ratio"] == 0.5:
            return EvalResult(config=dict(config), status=Status.RUNTIME_ERROR, cost_s=1.0, message="boom")
        ms = config["bx"] * config["ratio"] + (config["layout"] == "col")
        return EvalResult(config=dict(config), status=Status.OK, objective_ms=ms, times_ms=(ms, ms),
                          compile_ms=5.0, cost_s=1.0)

    def close(self) -> None:
        pass


def serve(lines: list[Any], budget: Budget | None = None, *, transcript: io.StringIO | None = None):
    """Replies to ``lines`` (dicts are sent as JSON, strings as they are), the trace and the outcome."""
    backend = Toy()
    recorder = TraceRecorder(SPACE.names)
    problem = Problem(space=SPACE, backend=backend, budget=budget or Budget(max_evals=3), observers=[recorder])
    data = [(json.dumps(x) if isinstance(x, dict) else x).encode() + b"\n" for x in lines]
    out = io.BytesIO()
    outcome = Session(problem, seed=11, transcript=transcript).run(iter(data), out)
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    return replies, recorder.frame(), outcome, backend


HELLO = {"type": "hello", "protocol": 1, "tuner": "test"}


def evaluate(config: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "evaluate", "config": config, **extra}


def test_hello_describes_the_problem():
    (reply,), _, outcome, _ = serve([HELLO])
    assert reply["type"] == "hello" and reply["protocol"] == 1
    p = reply["problem"]
    assert [q["name"] for q in p["parameters"]] == ["bx", "ratio", "layout"]
    assert p["parameters"][1]["values"] == [0.5, 1.0] and p["parameters"][2]["values"] == ["row", "col"]
    assert p["constraints"] == ["bx * ratio >= 1"]
    assert p["cardinality"] == 16 and p["valid_configurations"] == SPACE.count_valid() == 14
    assert p["budget"] == {"kind": "evaluations", "evaluations": 3, "seconds": None}
    assert p["seed"] == 11 and p["objective"] == {"name": "time", "unit": "ms", "goal": "minimize"}
    assert p["space_hash"] == SPACE.space_hash and p["backend"] == "toy"
    assert outcome.hello and outcome.client == "test" and outcome.ended == "closed"


def test_results_say_kind_charge_and_budget_left():
    replies, trace, outcome, backend = serve([HELLO, evaluate(A, id=1), evaluate(INVALID), evaluate(A, id="x"),
                                              {"type": "done"}])
    ok, rejected, repeat, done = replies[1:]
    assert ok["id"] == 1 and ok["result"]["kind"] == "evaluated" and ok["result"]["charged"]
    assert ok["result"]["objective"] == 1.0 and ok["result"]["times"] == [1.0, 1.0]
    assert ok["left"] == {"evaluations": 2, "seconds": None} and ok["exhausted"] is False
    assert rejected["result"]["kind"] == "rejected" and rejected["result"]["status"] == "constraint_violation"
    assert not rejected["result"]["charged"] and rejected["result"]["objective"] is None
    assert repeat["id"] == "x" and repeat["result"]["kind"] == "repeat" and not repeat["result"]["charged"]
    assert repeat["left"]["evaluations"] == 2
    assert done["summary"]["evaluated"] == 1 and done["summary"]["rejected"] == 1
    assert done["summary"]["repeated"] == 1 and done["summary"]["best"] == {"config": A, "objective": 1.0}
    assert backend.calls == [A]  # the violation and the repeat never reached the backend
    assert list(trace["kind"]) == ["evaluated", "rejected", "repeat"]
    assert list(trace.columns) == [*SPACE.names, *TRACE_COLUMNS]
    assert outcome.ended == "done"


def test_a_failed_evaluation_is_charged_with_no_objective():
    replies, _, _, _ = serve([HELLO, evaluate({"bx": 8, "ratio": 0.5, "layout": "col"})])
    r = replies[1]["result"]
    assert r["status"] == "runtime_error" and r["objective"] is None and r["charged"] and r["message"] == "boom"


@pytest.mark.parametrize(("line", "code", "field"), [
    ("not json", "parse_error", None),
    ("[1, 2]", "invalid_message", None),
    ({"config": A}, "invalid_message", "type"),
    ({"type": 3}, "invalid_message", "type"),
    ({"type": "tell"}, "unknown_type", "type"),
    ({"type": "evaluate"}, "invalid_message", "config"),
    ({"type": "evaluate", "config": A, "confg": A}, "invalid_message", "confg"),
    ({"type": "evaluate", "config": [2, 0.5, "row"]}, "invalid_message", "config"),
    ({"type": "evaluate", "config": A, "profiled": "yes"}, "invalid_message", "profiled"),
    ({"type": "evaluate", "config": A, "id": [1]}, "invalid_message", "id"),
    ({"type": "evaluate", "config": {"bx": 2, "ratio": 0.5}}, "invalid_config", "config.layout"),
    ({"type": "evaluate", "config": {**A, "by": 1}}, "invalid_config", "config.by"),
    ({"type": "evaluate", "config": {**A, "bx": 3}}, "invalid_config", "config.bx"),
    ({"type": "evaluate", "config": {**A, "bx": True}}, "invalid_config", "config.bx"),
    ({"type": "evaluate", "config": {**A, "layout": ["row"]}}, "invalid_config", "config.layout"),
    ({"type": "batch", "configs": A}, "invalid_message", "configs"),
    ({"type": "batch", "configs": [A, {**A, "ratio": 2.0}]}, "invalid_config", "configs[1].ratio"),
    ({"type": "valid", "configs": [A, 7]}, "invalid_message", "configs[1]"),
    ({"type": "hello", "protocol": "1"}, "invalid_message", "protocol"),
    ({"type": "hello", "protocol": 99}, "unsupported_protocol", "protocol"),
])
def test_a_malformed_request_gets_an_error_naming_the_field_and_the_session_goes_on(line, code, field):
    replies, trace, outcome, _ = serve([HELLO, line, evaluate(A)])
    error = replies[1]
    assert error["type"] == "error" and error["code"] == code and error["field"] == field, error
    assert error["message"]
    assert replies[2]["type"] == "result" and replies[2]["result"]["kind"] == "evaluated"
    assert len(trace) == 1 and outcome.errors == 1


def test_requests_before_hello_are_refused():
    replies, trace, _, _ = serve([evaluate(A), HELLO, evaluate(A)])
    assert replies[0]["code"] == "no_hello" and replies[2]["type"] == "result" and len(trace) == 1


def test_numbers_are_matched_to_the_spaces_own_values():
    """A client that writes 2.0 for the int 2 (or 1 for the float 1.0) names the same configuration."""
    replies, _, _, backend = serve([HELLO, evaluate({"bx": 2.0, "ratio": 1, "layout": "row"}),
                                        {"type": "done"}])
    assert replies[1]["result"]["kind"] == "evaluated"
    assert backend.calls == [{"bx": 2, "ratio": 1.0, "layout": "row"}]
    assert type(backend.calls[0]["bx"]) is int and type(backend.calls[0]["ratio"]) is float
    assert replies[2]["summary"]["best"]["config"] == {"bx": 2, "ratio": 1.0, "layout": "row"}


def test_valid_answers_without_evaluating():
    replies, trace, _, backend = serve([HELLO, {"type": "valid", "configs": [A, INVALID, B]},
                                        {"type": "valid", "configs": []}])
    assert replies[1] == {"type": "valid", "valid": [True, False, True]}
    assert replies[2] == {"type": "valid", "valid": []}
    assert backend.calls == [] and len(trace) == 0


def test_a_client_past_the_budget_is_refused_and_the_server_goes_on():
    configs = [A, B, INVALID, C, {"bx": 2, "ratio": 1.0, "layout": "col"}]
    replies, trace, _, backend = serve([HELLO, {"type": "batch", "configs": configs}, evaluate(
        {"bx": 4, "ratio": 0.5, "layout": "row"}), evaluate(B), evaluate(INVALID), {"type": "done"}],
        Budget(max_evals=3))
    batch = replies[1]
    assert [r["kind"] for r in batch["results"]] == ["evaluated", "evaluated", "rejected", "evaluated", "refused"]
    assert batch["results"][4]["status"] is None and not batch["results"][4]["charged"]
    assert batch["exhausted"] is True and batch["left"] == {"evaluations": 0, "seconds": None}
    refused, repeat, rejected, done = replies[2:]
    assert refused["type"] == "error" and refused["code"] == "budget_exhausted" and refused["field"] == "config"
    assert repeat["result"]["kind"] == "repeat" and rejected["result"]["kind"] == "rejected"
    assert done["summary"]["evaluated"] == 3 == len(backend.calls)
    assert int(trace["charged"].sum()) == 3 and len(trace) == 6


def test_a_time_budget_is_stated_and_spent():
    replies, _, _, _ = serve([HELLO, evaluate(A), evaluate(B), evaluate(C)], Budget(max_time_s=2.0))
    assert replies[0]["problem"]["budget"] == {"kind": "time", "evaluations": None, "seconds": 2.0}
    assert replies[1]["left"] == {"evaluations": None, "seconds": 1.0}
    assert replies[2]["exhausted"] is True and replies[3]["code"] == "budget_exhausted"


def test_the_end_of_input_ends_the_session_with_the_trace_intact():
    replies, trace, outcome, _ = serve([HELLO, evaluate(A), evaluate(B)])
    assert len(replies) == 3 and len(trace) == 2
    assert outcome.ended == "closed" and "without done" in outcome.report()["warning"]


def test_the_transcript_holds_both_sides():
    log = io.StringIO()
    serve([HELLO, "oops", evaluate(A), {"type": "done"}], transcript=log)
    entries = [json.loads(line) for line in log.getvalue().splitlines()]
    assert [e["from"] for e in entries] == ["client", "server"] * 4
    assert entries[2] == {"from": "client", "raw": "oops"}
    assert entries[0]["message"] == HELLO and entries[-1]["message"]["type"] == "done"


def test_nothing_is_read_after_done():
    replies, trace, outcome, _ = serve([HELLO, {"type": "done"}, evaluate(A)])
    assert len(replies) == 2 and len(trace) == 0 and outcome.requests == 2


def test_a_profiled_evaluation_is_passed_on():
    replies, trace, _, _ = serve([HELLO, evaluate(A), evaluate(A, profiled=True), evaluate(A, profiled=True)])
    assert [r["result"]["kind"] for r in replies[1:]] == ["evaluated", "profile", "repeat"]
    assert list(trace["profiled"]) == [False, True, True]


def test_a_python_client_rebuilds_the_space_and_checks_its_hash():
    from bat.core.errors import ProtocolError
    from bat.protocol.hello import budget_from_problem, describe, space_from_problem

    problem = describe(Problem(space=SPACE, backend=Toy(), budget=Budget(max_time_s=5.0)), 3)
    space = space_from_problem(json.loads(json.dumps(problem)))
    assert space.space_hash == SPACE.space_hash and space.count_valid() == 14
    assert budget_from_problem(problem) == Budget(max_time_s=5.0)
    problem["constraints"] = ["bx * ratio >= 2"]
    with pytest.raises(ProtocolError, match="hashes to"):
        space_from_problem(problem)
