"""Class 5 of issue 32: a run's identity covers everything that changes a measurement (the whole space file,
the problem size), and ``bat record`` on a command benchmark honours --max-minutes, --repeats and --timeout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from refusal import run_in

from bat.core.benchmark import load_benchmark
from bat.core.dataset import Dataset
from bat.run.identity import measurement_identity
from bat.run.recording.run_journal import journal_header, open_checkpoint
from bat.run.targets import command_target


def write(tmp_path: Path, name: str, *, n: int = 100, run: str = "true", values: int = 4, **extra) -> Path:
    raw = {"name": "toy", "parameters": [{"name": "X", "values": list(range(values))}], "constraints": [],
           "problem_size": {"N": n}, "command": {"run": run, "objective": "wall", "repeats": 2}, **extra}
    path = tmp_path / name
    path.write_text(json.dumps(raw))
    return path


def test_the_identity_follows_the_command_the_sizes_and_every_byte_that_matters(tmp_path) -> None:
    base = load_benchmark(write(tmp_path, "a.json"))
    same = load_benchmark(write(tmp_path, "b.json"))
    assert measurement_identity(base, {"N": 100}) == measurement_identity(same, {"N": 100})
    assert base.space.space_hash == load_benchmark(write(tmp_path, "c.json", n=5)).space.space_hash
    for other in (write(tmp_path, "c.json", n=5), write(tmp_path, "d.json", run="true {X}"),
                  write(tmp_path, "e.json", description="another kernel version")):
        assert measurement_identity(load_benchmark(other), {"N": 100}) != measurement_identity(base, {"N": 100})
    assert measurement_identity(base, {"N": 5}) != measurement_identity(base, {"N": 100})


def test_a_journal_of_another_problem_size_is_not_resumed(tmp_path) -> None:
    def header(path: Path) -> dict:
        target = command_target(load_benchmark(path))
        return journal_header(tuner="t", options=[], benchmark="toy", gpu=target.gpu, backend="command",
                              budget_evals=10, budget_time_s=None, seed=0, space_hash=target.space.space_hash,
                              noise="none", identity=target.identity)

    trace = tmp_path / "trace.parquet"
    first = open_checkpoint(trace, header(write(tmp_path, "s.json", n=100)), resume=False)
    first.journal.append({"config": {"X": 0}, "status": "ok", "objective_ms": 1.0, "times_ms": [1.0],
                          "compile_ms": 0.0, "cost_s": 0.0, "message": "", "extra": {}})
    first.journal.close()
    changed = open_checkpoint(trace, header(write(tmp_path, "s.json", n=5)), resume=True)
    assert changed.resumed == 0
    changed.journal.close()
    again = open_checkpoint(trace, header(write(tmp_path, "s.json", n=100)), resume=True)
    assert again.resumed == 1
    again.journal.close()


def test_record_of_a_command_benchmark_honours_max_minutes(tmp_path, monkeypatch) -> None:
    write(tmp_path, "s.json", run="sleep 0.2", values=200)
    code = run_in(tmp_path, monkeypatch, ["record", "-b", "s.json", "--all", "--max-minutes", "0.01",
                                          "--repeats", "1", "-o", "out.parquet"])
    rows = len(Dataset.load(tmp_path / "out.parquet").frame)
    assert code == 0 and rows < 20, (code, rows)  # 0.6 s of 200 runs of 0.2 s: it stopped early, at any load


@pytest.mark.parametrize("repeats", [1, 3])
def test_record_of_a_command_benchmark_honours_repeats_and_timeout(tmp_path, monkeypatch, repeats) -> None:
    write(tmp_path, "s.json", values=2)
    assert run_in(tmp_path, monkeypatch, ["record", "-b", "s.json", "--all", "--repeats", str(repeats),
                                          "-o", "r.parquet"]) == 0
    frame = Dataset.load(tmp_path / "r.parquet").frame
    assert {len(t) for t in frame["times_ms"]} == {repeats}
    write(tmp_path, "slow.json", run="sleep 30", values=1)
    assert run_in(tmp_path, monkeypatch, ["record", "-b", "slow.json", "--all", "--timeout", "0.3",
                                          "-o", "t.parquet"]) == 0  # a run of 30 s, killed at its limit
    assert list(Dataset.load(tmp_path / "t.parquet").frame["status"]) == ["timeout"]
