"""The protocol's JSON Schemas (bat/schemas/protocol/v1) against the server and a recorded session.

- every schema is valid Draft 2020-12 and every message type has one;
- the recorded session (tests/fixtures/protocol/session_v1.jsonl, made by
  record_session.py beside it) validates message by message, and replaying
  its client side against today's server gives the recorded replies;
- the server's own checks (bat.protocol.wire, no jsonschema) and the schemas
  agree on well-formed requests and on every structural mutation of them.
"""

from __future__ import annotations

import io
import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

from bat.core.dataset import Status
from bat.core.problem import Budget, EvalResult, Problem
from bat.core.space import Parameter, SearchSpace
from bat.protocol import wire
from bat.protocol.server import Session, StreamTuner
from bat.run.driver import run_tuner
from bat.run.targets import replay_target

SCHEMAS = files("bat").joinpath("schemas/protocol/v1")
SESSION = Path(__file__).parent / "fixtures" / "protocol" / "session_v1.jsonl"
REQUESTS = ("hello", "evaluate", "batch", "valid", "done")
REPLIES = ("hello", "result", "batch", "valid", "done", "error")
#: reply fields that differ from run to run (the tuner's own time)
VOLATILE = {("done", "summary", "tuner_s")}


def _load() -> dict[str, dict[str, Any]]:
    return {p.name.removesuffix(".json"): json.loads(p.read_text()) for p in SCHEMAS.iterdir()
            if p.name.endswith(".json")}


ALL = _load()
REGISTRY = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in ALL.values())


def validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(ALL[name], registry=REGISTRY)


def schema_for(side: str, message: dict[str, Any]) -> str:
    kind = message.get("type")
    return f"{kind}.request" if side == "client" else f"{kind}.reply"


def session() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = [json.loads(line) for line in SESSION.read_text().splitlines()]
    assert lines[0]["from"] == "bat"
    return lines[0]["settings"], lines[1:]


def test_every_schema_is_valid_and_every_message_has_one():
    for schema in ALL.values():
        jsonschema.Draft202012Validator.check_schema(schema)
    assert {f"{t}.request" for t in REQUESTS} | {f"{t}.reply" for t in REPLIES} | {"common", "request", "reply"} \
        == set(ALL)
    assert set(wire.REQUEST_FIELDS) == set(REQUESTS)
    assert ALL["error.reply"]["properties"]["code"]["enum"] == list(wire.ERROR_CODES)
    assert ALL["common"]["$defs"]["status"]["enum"] == [s.value for s in Status]


def test_the_recorded_session_validates_message_by_message():
    _, entries = session()
    kinds = set()
    for entry in entries:
        if "raw" in entry:
            continue
        message, side = entry["message"], entry["from"]
        umbrella = validator("request" if side == "client" else "reply")
        verdict = not list(umbrella.iter_errors(message))
        if side == "server":
            assert verdict, message
            assert not list(validator(schema_for(side, message)).iter_errors(message))
            kinds.add(message["type"])
    assert kinds == set(REPLIES)  # the fixture exercises every reply


def test_the_recorded_session_replays_against_the_server():
    """The client's side, sent again to today's server, gets the recorded replies."""
    settings, entries = session()
    sent = [(e["raw"] if "raw" in e else json.dumps(e["message"])).encode() + b"\n"
            for e in entries if e["from"] == "client"]
    recorded = [e["message"] for e in entries if e["from"] == "server"]
    target = replay_target(settings["benchmark"], settings["gpu"])
    out = io.BytesIO()
    b = settings["budget"]
    run_tuner(StreamTuner(reader=iter(sent), writer=out), target, seed=settings["seed"],
              budget=Budget(max_evals=b["evaluations"], max_time_s=b["seconds"]))
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(replies) == len(recorded)
    for got, want in zip(replies, recorded, strict=True):
        assert _stable(got) == _stable(want)


def _stable(message: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(message))
    for kind, outer, key in VOLATILE:
        if out.get("type") == kind:
            out[outer].pop(key)
    return out


# -- the server's checks and the schemas agree ----------------------------------------------
SPACE = SearchSpace("toy", [Parameter("bx", (1, 2)), Parameter("layout", ("row", "col"))])
CONFIG = {"bx": 1, "layout": "row"}
GOOD = {
    "hello": {"type": "hello", "protocol": 1, "tuner": "t", "id": 1},
    "evaluate": {"type": "evaluate", "config": CONFIG, "profiled": False, "id": "e"},
    "batch": {"type": "batch", "configs": [CONFIG]},
    "valid": {"type": "valid", "configs": [CONFIG, CONFIG]},
    "done": {"type": "done", "id": 2},
}
#: JSON values of every type, to put where a field expects another
SAMPLES = [None, True, 3, 2.5, "x", [1], {"a": 1}]


def _mutations() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for kind, good in GOOD.items():
        out.append((f"{kind}: as it is", good))
        out.append((f"{kind}: an unknown field", {**good, "extra": 1}))
        for name in good:
            out.append((f"{kind}: without {name}", {k: v for k, v in good.items() if k != name}))
            for sample in SAMPLES:
                if type(sample) is not type(good[name]):
                    out.append((f"{kind}: {name} = {json.dumps(sample)}", {**good, name: sample}))
    out.append(("unknown type", {"type": "tell"}))
    out.append(("config of a boolean", {"type": "evaluate", "config": {"bx": True, "layout": "row"}}))
    out.append(("configs holding a number", {"type": "valid", "configs": [CONFIG, 7]}))
    return out


def _server_accepts(message: dict[str, Any]) -> bool:
    """Whether the server serves ``message`` (structurally: after a hello, with a budget left)."""
    hello = json.dumps(GOOD["hello"]).encode() + b"\n"
    problem = Problem(space=SPACE, backend=_Ok(), budget=Budget(max_evals=5))
    out = io.BytesIO()
    Session(problem, seed=0).run(iter([hello, json.dumps(message).encode() + b"\n"]), out)
    reply = json.loads(out.getvalue().splitlines()[1])
    assert reply.get("code") not in ("parse_error", "no_hello", "budget_exhausted", "server_error")
    return reply["type"] != "error" or reply["code"] == "unsupported_protocol"


class _Ok:
    name = "none"

    def describe(self) -> str:
        return "answers ok in 1 ms"

    def evaluate(self, config):
        return EvalResult(config=dict(config), status=Status.OK, objective_ms=1.0, cost_s=0.0)

    def close(self) -> None:
        pass


@pytest.mark.parametrize(("case", "message"), _mutations(), ids=[c for c, _ in _mutations()])
def test_server_and_schema_agree(case, message):
    schema_ok = not list(validator("request").iter_errors(message))
    assert _server_accepts(message) == schema_ok
