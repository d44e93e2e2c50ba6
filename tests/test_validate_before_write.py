"""Every command validates every option before it writes anything (issue 43, class 7, as a mechanism).

The test walks the commands typer builds and gives each option of each command, on an otherwise valid
command line (``command_lines.BASE``), a value it must refuse: numbers past the option's range (10^30,
-1, NaN, 1e400: each only where the option's own range refuses it), an empty text, and for text options
and choices a value no command takes (``?bad?``); path options have their own battery
(test_path_battery.py). The property: exit 2, one ``error:`` line, nothing on stdout, and the working
folder (the data folder is inside it) exactly as it was: no output folder, no lock, no run store, no
figure. A text option that takes any text is listed in ``FREE_TEXT`` with what it is; one that is
neither refused nor listed fails the test.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from command_lines import BASE, listing, run_bounded
from typer._click import Context
from typer._click.exceptions import BadParameter
from typer._click.types import FloatParamType, IntParamType, StringParamType

from bat.cli import _command, main
from bat.cli.options import EMPTY_ALLOWED
from bat.cli.output import EXIT_USAGE

NOT_A_VALUE = "?bad?"
#: (command, option) -> what it is: text options that take any non-empty text
FREE_TEXT = {
    ("import", "source"): "where the data came from, free text in the dataset's provenance",
    ("import", "licence"): "the data's licence, free text in its provenance",
    ("import", "notes"): "notes kept in the dataset",
    ("serve", "name"): "the tuner's name in the trace",
}


def _options() -> list[tuple[str, object]]:
    commands = _command().commands
    return [(name, p) for name, command in sorted(commands.items()) for p in command.params
            if p.param_type_name == "option" and not getattr(p, "is_flag", False) and p.type.name != "path"]


def _bad_values(command: str, param: object) -> list[str]:
    """Values the option itself must refuse."""
    if isinstance(param.type, IntParamType | FloatParamType):  # type: ignore[attr-defined]
        ctx = Context(_command().commands[command])
        texts = ["1" + "0" * 30, "-1"] + (["nan", "1e400"] if isinstance(param.type, FloatParamType) else [])

        def refused(text: str) -> bool:
            try:
                param.process_value(ctx, text)  # type: ignore[attr-defined]
            except BadParameter:
                return True
            return False

        return [t for t in texts if refused(t)]
    if type(param.type) is StringParamType:  # type: ignore[attr-defined]
        key = (command, param.name)  # type: ignore[attr-defined]
        return ([] if key in EMPTY_ALLOWED else [""]) + ([] if key in FREE_TEXT else [NOT_A_VALUE])
    return [NOT_A_VALUE]  # a choice


CASES = [(c, p.opts[0], v) for c, p in _options() for v in _bad_values(c, p)]  # type: ignore[attr-defined]


def test_every_command_has_a_command_line_and_every_option_a_bad_value():
    assert set(_command().commands) == set(BASE)
    covered = {(c, o) for c, o, _ in CASES}
    free = {(c, p.opts[0]) for c, p in _options() if (c, p.name) in FREE_TEXT}  # type: ignore[attr-defined]
    assert {(c, p.opts[0]) for c, p in _options()} == covered | free  # type: ignore[attr-defined]
    assert {("compare", "--noise"), ("analyze", "--noise-alpha"), ("run", "--dataset"), ("serve", "--gpu"),
            ("verify", "--random"), ("hypertune", "--split")} <= covered


@pytest.mark.parametrize(("command", "option", "value"), CASES, ids=[f"{c}{o}={v!r}" for c, o, v in CASES])
def test_a_refused_option_leaves_nothing_written(command, option, value, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BAT_DATA_DIR", str(tmp_path / "bat-data"))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO()))  # bat serve: a client that sends nothing
    before = listing(tmp_path)
    argv = [*BASE[command], option, value]
    code = run_bounded(argv, 120)
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == EXIT_USAGE, err
    assert len(lines) == 1 and lines[0].startswith("error:"), err
    assert out == ""
    assert listing(tmp_path) == before


def test_an_empty_text_is_refused_alike_by_every_command(tmp_path, monkeypatch, capsys):
    """``--gpus ''`` was read as all GPUs by bat analyze and refused by bat compare."""
    monkeypatch.chdir(tmp_path)
    for argv in (["analyze", "-b", "pnpoly", "--gpus", " ", "-o", "an"], [*BASE["compare"], "--gpus", ""]):
        assert main(argv) == EXIT_USAGE
        assert "--gpus" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_free_text_options_take_an_empty_text(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BAT_DATA_DIR", str(tmp_path / "bat-data"))
    assert main([*BASE["import"], "--notes", "", "--licence", ""]) == 0
    assert (tmp_path / "i.parquet").is_file()


def _one_row_dataset(path: Path, status: str) -> None:
    """The pnpoly dataset cut to its first row, of ``status``, its metadata kept."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from bad_input_builders import PNPOLY_DATA

    table = pq.read_table(PNPOLY_DATA)
    one = table.slice(0, 1)
    one = one.set_column(one.schema.get_field_index("status"), "status", pa.array([status], pa.large_string()))
    pq.write_table(one.replace_schema_metadata(table.schema.metadata), path)


@pytest.mark.parametrize("status", ["ok", "runtime_error"])
@pytest.mark.parametrize("command", ["compare", "analyze", "hypertune"])
def test_data_no_score_can_stand_on_is_refused_before_any_file(command, status, tmp_path, monkeypatch, capsys):
    """One valid measurement (the score's scale from optimum to worst is empty) or none: compare made its run
    store, hypertune its unit store, and analyze its figures, before failing (an internal error for the
    single measurement)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BAT_DATA_DIR", str(tmp_path / "bat-data"))
    _one_row_dataset(tmp_path / "d.parquet", status)
    before = listing(tmp_path)
    argv = {"compare": ["compare", "-t", "r=reference:random", "--dataset", "d.parquet", "--budgets", "5",
                        "--repeats", "1", "-o", "out"],
            "analyze": ["analyze", "--dataset", "d.parquet", "--no-importance", "-o", "out"],
            "hypertune": ["hypertune", "-t", "reference:random", "--train", "d.parquet", "--heldout",
                          "pnpoly_RTX_2080_Ti", "-n", "1", "--budget", "5", "-r", "2", "--final-repeats", "2",
                          "--out", "out"]}[command]
    assert run_bounded(argv, 120) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "pnpoly/RTX_3090" in err and "internal error" not in err
    assert listing(tmp_path) == before
