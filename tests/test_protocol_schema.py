"""The protocol's JSON Schemas (bat/schemas/protocol/v1 and v2) against the server and a recorded session.

- every schema is valid Draft 2020-12 and every message type of each version has one (version 2 adds
  ``prior``, the transfer prior);
- the recorded session (tests/fixtures/protocol/session_v1.jsonl, made by
  record_session.py beside it) validates message by message, and replaying
  its client side against today's server gives the recorded replies;
- the server's own checks (bat.protocol.wire, no jsonschema) and the schemas
  agree on well-formed requests and on every structural mutation of them, in
  a session of each version.
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

from bat.core.dataset import Dataset, DatasetMeta, Status, make_frame
from bat.core.facts import TargetFacts
from bat.core.limits import PRIOR_PAGE_ROWS
from bat.core.problem import Budget, EvalResult, Problem
from bat.core.space import Parameter, SearchSpace
from bat.protocol import PROTOCOL_VERSIONS, wire
from bat.protocol.server import Session, StreamTuner
from bat.run.driver import run_tuner
from bat.run.targets import replay_target

SESSION = Path(__file__).parent / "fixtures" / "protocol" / "session_v1.jsonl"
REQUESTS = ("hello", "evaluate", "batch", "valid", "done")
REPLIES = ("hello", "result", "batch", "valid", "done", "error")
#: what each later version adds (requests, replies)
ADDED = {2: (("prior",), ("prior",))}
#: reply fields that differ from run to run (the tuner's own time)
VOLATILE = {("done", "summary", "tuner_s")}


def _load(version: int) -> dict[str, dict[str, Any]]:
    folder = files("bat").joinpath(f"schemas/protocol/v{version}")
    return {p.name.removesuffix(".json"): json.loads(p.read_text()) for p in folder.iterdir()
            if p.name.endswith(".json")}


SCHEMAS = {v: _load(v) for v in PROTOCOL_VERSIONS}
REGISTRIES = {v: Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas.values())
              for v, schemas in SCHEMAS.items()}


def validator(name: str, version: int = 1) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(SCHEMAS[version][name], registry=REGISTRIES[version])


def messages(version: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The request and reply types of a protocol version."""
    requests, replies = list(REQUESTS), list(REPLIES)
    for v in range(2, version + 1):
        requests += ADDED[v][0]
        replies += ADDED[v][1]
    return tuple(requests), tuple(replies)


def schema_for(side: str, message: dict[str, Any]) -> str:
    kind = message.get("type")
    return f"{kind}.request" if side == "client" else f"{kind}.reply"


def session() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = [json.loads(line) for line in SESSION.read_text().splitlines()]
    assert lines[0]["from"] == "bat"
    return lines[0]["settings"], lines[1:]


@pytest.mark.parametrize("version", PROTOCOL_VERSIONS)
def test_every_schema_is_valid_and_every_message_has_one(version):
    schemas = SCHEMAS[version]
    requests, replies = messages(version)
    for schema in schemas.values():
        jsonschema.Draft202012Validator.check_schema(schema)
        assert f"/protocol/v{version}/" in schema["$id"]
    assert {f"{t}.request" for t in requests} | {f"{t}.reply" for t in replies} | {"common", "request", "reply"} \
        == set(schemas)
    assert {t for t in wire.REQUEST_FIELDS if wire.SINCE.get(t, 1) <= version} == set(requests)
    assert schemas["error.reply"]["properties"]["code"]["enum"] == list(wire.ERROR_CODES)
    assert schemas["common"]["$defs"]["status"]["enum"] == [s.value for s in Status]
    assert schemas["hello.reply"]["properties"]["protocol"] == {"const": version}


def test_version_2_pages_hold_at_most_the_limit():
    reply = SCHEMAS[2]["prior.reply"]["properties"]
    assert reply["configs"]["maxItems"] == reply["status"]["maxItems"] == PRIOR_PAGE_ROWS


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
#: version 2: the hello says 2, and the prior request (of a GPU the toy problem's prior holds)
GOOD_2 = {**GOOD, "hello": {**GOOD["hello"], "protocol": 2}, "prior": {"type": "prior", "gpu": "OTHER", "offset": 0}}
#: JSON values of every type, to put where a field expects another
SAMPLES = [None, True, 3, 2.5, "x", [1], {"a": 1}]


def _mutations(version: int = 1) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for kind, good in (GOOD if version == 1 else GOOD_2).items():
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
    if version == 1:
        out.append(("a prior request in a version 1 session", GOOD_2["prior"]))
    else:
        out.append(("a negative offset", {**GOOD_2["prior"], "offset": -1}))
    return out


def _server_accepts(message: dict[str, Any], version: int = 1) -> bool:
    """Whether the server serves ``message`` (structurally: after a hello of ``version``, with a budget left)."""
    hello = json.dumps({**GOOD["hello"], "protocol": version}).encode() + b"\n"
    problem = Problem(space=SPACE, backend=_Ok(), budget=Budget(max_evals=5), facts=TOY_FACTS)
    out = io.BytesIO()
    Session(problem, seed=0).run(iter([hello, json.dumps(message).encode() + b"\n"]), out)
    reply = json.loads(out.getvalue().splitlines()[1])
    assert reply.get("code") not in ("parse_error", "no_hello", "budget_exhausted", "server_error")
    return reply["type"] != "error" or reply["code"] == "unsupported_protocol"


def _toy_facts() -> TargetFacts:
    rows = [{"bx": 1, "layout": "row", "status": "ok", "objective_ms": 2.0},
            {"bx": 2, "layout": "col", "status": "compile_error"}]
    other = Dataset(make_frame(SPACE.names, rows), DatasetMeta("toy", SPACE.space_hash, "OTHER"), SPACE.names)
    return TargetFacts(gpu="TOY", others={"OTHER": other})


TOY_FACTS = _toy_facts()


class _Ok:
    name = "none"

    def describe(self) -> str:
        return "answers ok in 1 ms"

    def evaluate(self, config):
        return EvalResult(config=dict(config), status=Status.OK, objective_ms=1.0, cost_s=0.0)

    def close(self) -> None:
        pass


CASES = [(v, case, message) for v in PROTOCOL_VERSIONS for case, message in _mutations(v)]


@pytest.mark.parametrize(("version", "case", "message"), CASES, ids=[f"v{v} {c}" for v, c, _ in CASES])
def test_server_and_schema_agree(version, case, message):
    schema_ok = not list(validator("request", version).iter_errors(message))
    assert _server_accepts(message, version) == schema_ok
