"""Words a user meets (issue 42): one spelling of the GPU option on every command that takes GPUs, a missing
file called missing, a run's first line that says what it replays once."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from refusal import assert_refused
from typer.models import OptionInfo

from bat.cli import EXIT_OK, app, main


def gpu_option_names() -> dict[str, set[str]]:
    """Every command's GPU option, by the names it answers to."""
    found = {}
    for info in app.registered_commands:
        for param in inspect.signature(info.callback).parameters.values():
            default = param.default
            if isinstance(default, OptionInfo):
                names = {default.default, *default.param_decls} if isinstance(default.default, str) \
                    else set(default.param_decls)
                if names & {"--gpu", "--gpus"}:
                    found[info.name or info.callback.__name__] = names
    return found


def test_every_command_that_takes_gpus_answers_to_both_spellings():
    found = gpu_option_names()
    assert {"run", "compare", "analyze", "check"} <= set(found), found
    for command, names in found.items():
        if command in ("import", "record"):  # the GPU id a new dataset gets: one GPU by definition
            continue
        assert {"--gpu", "--gpus"} <= names, (command, names)


def test_check_takes_gpus(capsys):
    assert main(["check", "pnpoly", "--gpus", "RTX_3090,RTX_3060_laptop"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "pnpoly/RTX_3090" in out and "pnpoly/RTX_3060_laptop" in out and "pnpoly/RTX_2080_Ti" not in out


def test_a_missing_baseline_is_called_missing(tmp_path: Path, monkeypatch, capsys):
    line = assert_refused(tmp_path, monkeypatch, capsys,
                          ["compare", "-t", "reference:random", "-b", "pnpoly", "--budgets", "5", "-r", "2",
                           "--baseline", "gone.json", "-o", "out"], "gone.json")
    assert "no such file" in line and "not a JSON file" not in line


@pytest.mark.parametrize(("args", "first"), [
    (["run", "-t", "reference:random", "-b", "pnpoly", "-n", "3"], "no GPU found: replaying "),
    (["run", "-t", "reference:random", "-b", "pnpoly", "-n", "3", "--backend", "replay"],
     "--backend replay: replaying "),
])
def test_the_first_line_says_replaying_once(args: list[str], first: str, tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("BAT_DATA_DIR", str(tmp_path))
    assert main(args) == EXIT_OK
    line = capsys.readouterr().out.splitlines()[0]
    assert line.startswith(first) and line.count("replaying") == 1
