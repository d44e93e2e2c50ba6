"""Issue 32, class 6: a dataset imported with --allow-suspect keeps its suspect rows quarantined, and every
command whose output draws on it says so next to what it shows: a ``quarantined:`` line on stdout, the
``quarantined`` list in its ``--json`` document (valid under its schema), the mark at the top of a written
report. A command that draws on clean data, or on no data, carries no mark (bat/core/quarantine.py)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from bad_input_builders import cache, first_cache_record
from refusal import run_in

from bat.core import quarantine

SCHEMAS = Path(__file__).resolve().parents[1] / "bat" / "schemas" / "cli"
DATA = "bat-data/datasets/pnpoly_RTX_3090.parquet"
CLEAN = "shipped/bat2-kerneltuner/pnpoly_RTX_3090"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """A data folder holding pnpoly on RTX_3090 with one row quarantined (a time of -36.7 ms)."""
    cache(first_cache_record(lambda r: r.update(time=-36.7)))(tmp_path / "c.json")
    assert run_in(tmp_path, monkeypatch, ["import", "c.json", "-b", "pnpoly", "--allow-suspect"]) == 0
    assert (tmp_path / DATA).is_file()
    capsys.readouterr()
    return tmp_path


def human(folder: Path, monkeypatch, capsys, argv: list[str], code: int = 0) -> str:
    assert run_in(folder, monkeypatch, argv) == code
    return capsys.readouterr().out


def document(folder: Path, monkeypatch, capsys, argv: list[str], code: int = 0) -> dict:
    assert run_in(folder, monkeypatch, [*argv, "--json"]) == code
    doc = json.loads(capsys.readouterr().out)
    schema = json.loads((SCHEMAS / f"{doc['command']}.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    return doc


def marked(out: str) -> bool:
    lines = [line for line in out.splitlines() if line.startswith("quarantined: ")]
    return len(lines) == 1 and DATA in lines[0] and "1 quarantined suspect rows" in lines[0]


def assert_marked(folder, monkeypatch, capsys, argv: list[str], code: int = 0) -> dict:
    assert marked(human(folder, monkeypatch, capsys, argv, code))
    doc = document(folder, monkeypatch, capsys, argv, code)
    assert [(Path(d["dataset"]).resolve(), d["rows"]) for d in doc["quarantined"]] == [((folder / DATA).resolve(),
                                                                                          1)]
    return doc


def test_run(folder, monkeypatch, capsys) -> None:
    assert_marked(folder, monkeypatch, capsys, ["run", "-t", "reference:random", "-d", DATA, "-n", "5", "-o",
                                                "a.parquet", "--force"])
    clean = document(folder, monkeypatch, capsys, ["run", "-t", "reference:random", "-d", CLEAN, "-n", "5", "-o",
                                                   "b.parquet"])
    assert "quarantined" not in clean and "best" in clean


def test_compare_and_its_summary(folder, monkeypatch, capsys) -> None:
    argv = ["compare", "-t", "reference:random", "-d", DATA, "--budgets", "5", "--repeats", "1", "--no-plots"]
    assert marked(human(folder, monkeypatch, capsys, [*argv, "-o", "cmp"]))
    assert (folder / "cmp" / "summary.md").read_text().startswith("> **Quarantined data:**")
    assert json.loads((folder / "cmp" / "results.json").read_text())["quarantined"][0]["rows"] == 1
    doc = document(folder, monkeypatch, capsys, [*argv, "-o", "cmp2"])
    assert doc["quarantined"][0]["rows"] == 1


def test_analyze_and_its_report(folder, monkeypatch, capsys) -> None:
    doc = document(folder, monkeypatch, capsys, ["analyze", "-d", DATA, "-o", "rep", "--no-importance",
                                                 "--format", "png"])
    assert doc["quarantined"][0]["rows"] == 1
    assert (folder / "rep" / "report.md").read_text().startswith("> **Quarantined data:**")
    assert json.loads((folder / "rep" / "results.json").read_text())["quarantined"][0]["rows"] == 1


def test_list_datasets_marks_the_row(folder, monkeypatch, capsys) -> None:
    out = human(folder, monkeypatch, capsys, ["list", "datasets"])
    row = next(line for line in out.splitlines() if "data/pnpoly_RTX_3090" in line)
    assert "(1 quarantined)" in row
    assert not any("(1 quarantined)" in line for line in out.splitlines() if "shipped/" in line)
    doc = document(folder, monkeypatch, capsys, ["list", "datasets"])
    counts = {d["id"]: d["quarantined"] for d in doc["datasets"]}
    assert counts["data/pnpoly_RTX_3090"] == 1 and counts[CLEAN] == 0


def test_check(folder, monkeypatch, capsys) -> None:
    assert_marked(folder, monkeypatch, capsys, ["check", DATA])


def test_export(folder, monkeypatch, capsys) -> None:
    assert_marked(folder, monkeypatch, capsys, ["export", DATA, "--to", "t4", "-o", "e.json", "--force"])


def test_inspect_draws_on_no_data_and_carries_no_mark(folder, monkeypatch, capsys) -> None:
    pytest.importorskip("cuda.bindings.nvrtc", reason="bat inspect compiles with NVRTC")
    doc = document(folder, monkeypatch, capsys, ["inspect", "-b", "pnpoly", "--random"])
    assert "quarantined" not in doc and doc["resources"]


def test_one_file_named_two_ways_is_one_mark(folder, monkeypatch) -> None:
    monkeypatch.chdir(folder)
    quarantine.forget()
    quarantine.note(DATA, 1)
    quarantine.note(str((folder / DATA).resolve()), 1)
    assert quarantine.seen() == [{"dataset": DATA, "rows": 1}]
    quarantine.forget()
    assert quarantine.seen() == []


def test_serve_marks_on_stderr_not_in_the_protocol(tmp_path, monkeypatch, capsys) -> None:
    import io
    import sys

    cache(first_cache_record(lambda r: r.update(time=-36.7)))(tmp_path / "c.json")
    assert run_in(tmp_path, monkeypatch, ["import", "c.json", "-b", "pnpoly", "--gpu", "QUARANTINE_GPU",
                                          "--allow-suspect", "-o", "q.parquet"]) == 0
    (tmp_path / "bat-data" / "datasets").mkdir(parents=True, exist_ok=True)
    (tmp_path / "q.parquet").rename(tmp_path / "bat-data" / "datasets" / "q.parquet")
    capsys.readouterr()
    lines = b'{"type": "hello", "protocol": 1, "tuner": "t"}\n{"type": "done"}\n'
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(lines)))
    assert run_in(tmp_path, monkeypatch, ["serve", "-b", "pnpoly", "--gpu", "QUARANTINE_GPU", "-n", "2"]) == 0
    captured = capsys.readouterr()
    assert all(json.loads(line) for line in captured.out.splitlines())  # only protocol replies on stdout
    assert "quarantined: this output draws on" in captured.err and "q.parquet" in captured.err
