"""Python clients of the protocol: a BAT tuner in another process, ``bat serve`` on a pipe and on a
socket, and clients that misbehave (print to stdout, die, overrun the budget).

Scripts here import only ``bat.protocol.client`` (standard library), so
their processes start quickly.
"""

from __future__ import annotations

import sys
import textwrap
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from bat.cli import main
from bat.core.errors import TunerError
from bat.core.problem import Budget
from bat.core.trace import read_trace
from bat.protocol.client import Client, ServerError
from bat.registry import make_tuner
from bat.run.driver import run_tuner
from bat.run.targets import Target, replay_target
from bat.testing import check_tuner
from bat.tuner_adapters.portable_search import PortableSearch

SERVE = [sys.executable, "-c", "import sys; from bat.cli import main; sys.exit(main(sys.argv[1:]))", "serve"]

#: a client that prints to stdout, evaluates the first two values of the first parameter, then exits 3
DIES = """
import os
from bat.protocol.client import Client
client = Client.stdio()
print("this print goes to stderr, not into the protocol")
problem = client.hello("dies")
first = {p["name"]: p["values"][0] for p in problem["parameters"]}
name = problem["parameters"][0]["name"]
for value in problem["parameters"][0]["values"][:2]:
    client.evaluate({**first, name: value})
os._exit(3)
"""

#: a client that goes on after the budget is spent, then says done
GREEDY = """
from bat.protocol.client import Client, ServerError
client = Client.stdio()
problem = client.hello("greedy")
params = problem["parameters"]
first = {p["name"]: p["values"][0] for p in params}
refused = 0
for p in params:
    for value in p["values"]:
        config = {**first, p["name"]: value}
        if not client.valid([config])[0]:
            continue
        try:
            client.evaluate(config)
        except ServerError as exc:
            assert exc.code == "budget_exhausted" and exc.field == "config", exc
            refused += 1
assert refused > 0 and client.exhausted
assert client.evaluate(first)["kind"] == "repeat"
client.done()
"""


@pytest.fixture(scope="module")
def gemm() -> Target:
    return replay_target("gemm", "RTX_3090")


def script(tmp_path: Path, text: str) -> str:
    path = tmp_path / "client.py"
    path.write_text(textwrap.dedent(text))
    return f"exec:{sys.executable} {path}"


def test_a_bat_tuner_behind_exec_passes_the_battery():
    check_tuner(lambda: make_tuner(f"exec:{sys.executable} -m bat.protocol.remote reference:random"))


def test_the_python_client_twin_gives_the_in_process_trace(gemm):
    budget = Budget(max_evals=60)
    spec = f"exec:{sys.executable} -m bat.tuner_adapters.portable_search --strategy local"
    external = run_tuner(make_tuner(spec), gemm, budget=budget, seed=9)
    twin = run_tuner(PortableSearch(strategy="local"), gemm, budget=budget, seed=9)
    cols = [c for c in twin.trace.columns if c != "tuner_s"]
    pd.testing.assert_frame_equal(external.trace[cols], twin.trace[cols], check_exact=True)


def test_a_client_that_dies_ends_the_run_with_its_trace(gemm, tmp_path, capfd, monkeypatch):
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)  # its print reaches stderr however Python buffers
    result = run_tuner(make_tuner(script(tmp_path, DIES)), gemm, budget=Budget(max_evals=10), seed=1,
                       out=tmp_path / "t.parquet")
    assert result.evaluated == 2 and len(result.trace) == 2
    report = result.trace_meta["tuner_report"]
    assert report["exit_status"] == 3 and report["ended"] == "closed" and "status 3" in report["warning"]
    trace, meta = read_trace(tmp_path / "t.parquet")
    assert len(trace) == 2 and meta["tuner_report"]["exit_status"] == 3
    assert "this print goes to stderr" in capfd.readouterr().err


def test_a_client_that_dies_before_hello_is_an_error(gemm, tmp_path):
    with pytest.raises(TunerError, match="exit status 5"):
        run_tuner(make_tuner(script(tmp_path, "import sys; sys.exit(5)")), gemm, budget=Budget(max_evals=3))


def test_a_client_past_the_budget_is_refused_and_the_run_completes(gemm, tmp_path):
    result = run_tuner(make_tuner(script(tmp_path, GREEDY)), gemm, budget=Budget(max_evals=4), seed=1)
    assert result.evaluated == 4 and result.trace_meta["tuner_report"]["ended"] == "done"
    assert result.trace_meta["tuner_report"]["errors"] > 0


def test_an_unknown_program_fails_before_any_run():
    with pytest.raises(TunerError, match="no such executable"):
        make_tuner("exec:./no/such/tuner --fast")
    with pytest.raises(TunerError, match="needs a program"):
        make_tuner("exec:")


def test_a_client_that_starts_bat_serve(tmp_path):
    out = tmp_path / "served.parquet"
    with Client.spawn([*SERVE, "-b", "gemm", "-n", "3", "--seed", "4", "--name", "spawned", "-o", str(out)]) as c:
        problem = c.hello("spawner")
        assert problem["budget"]["evaluations"] == 3 and problem["space"] == "gemm"
        first = {p["name"]: p["values"][0] for p in problem["parameters"]}
        values = problem["parameters"][0]["values"]
        results = c.batch([{**first, "MWG": v} for v in values])
        assert [r["kind"] for r in results] == ["evaluated"] * 3 + ["refused"] * (len(values) - 3)
        assert c.exhausted and c.left["evaluations"] == 0
        with pytest.raises(ServerError) as exc:
            c.evaluate({**first, "MWG": 99})
        assert exc.value.code == "invalid_config" and exc.value.field == "config.MWG"
        summary = c.done()
    assert summary["evaluated"] == 3 and summary["best"] is not None
    trace, meta = read_trace(out)
    assert len(trace) == 3 and meta["tuner"] == "spawned" and meta["seed"] == 4


def test_bat_serve_on_a_socket(tmp_path, capsys):
    path = tmp_path / "bat.sock"
    out = tmp_path / "t.parquet"
    codes: list[int] = []
    server = threading.Thread(target=lambda: codes.append(main(
        ["serve", "-b", "gemm", "-n", "2", "--socket", str(path), "-o", str(out), "--transcript",
         str(tmp_path / "log.jsonl")])))
    server.start()
    deadline = time.monotonic() + 60
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    with Client.connect(str(path)) as c:
        problem = c.hello("socket")
        first = {p["name"]: p["values"][0] for p in problem["parameters"]}
        assert c.evaluate(first)["kind"] == "evaluated"
        assert c.done()["evaluated"] == 1
    server.join(60)
    assert codes == [0] and not path.exists()
    assert len(read_trace(out)[0]) == 1
    assert (tmp_path / "log.jsonl").read_text().count('"from":"client"') == 3
    err = capsys.readouterr().err
    assert "listening on" in err and "ended: done" in err


def test_the_exec_scheme_in_the_registry(capsys):
    from bat.registry import tuner_class, with_arguments

    cls, kwargs = tuner_class("exec:/bin/true --x 'a b'")
    assert cls.__name__ == "ExternalTuner" and kwargs == {"command": "/bin/true --x 'a b'"}
    assert make_tuner("exec:/bin/true --x 'a b'").argv == ["/bin/true", "--x", "a b"]
    assert with_arguments("exec:./t", ["--strategy", "a b"]) == "exec:./t --strategy 'a b'"
    with pytest.raises(TunerError, match="arguments after -- are for a scheme tuner"):
        with_arguments("optuna", ["--x"])
    assert main(["run", "-t", "nope", "-b", "gemm"]) == 2
    assert "exec:..." in capsys.readouterr().err
    assert main(["list", "tuners"]) == 0
    assert "exec:..." in capsys.readouterr().out


def test_the_python_client_needs_only_the_standard_library():
    """bat/protocol/client.py can be copied where BAT is not installed."""
    import ast

    import bat.protocol.client as client

    tree = ast.parse(Path(client.__file__).read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}
    assert imported - {"__future__"} <= sys.stdlib_module_names, imported
