"""Every numeric option of every command has a range checked when the command line is parsed (issue 43, class 2).

The test walks the commands typer builds, so an option added later without a range fails here: each
integer or float option must refuse 10**30 (past C's long and NumPy's seeds) and each float option
``nan``, as a usage error (exit 2) before the command runs.
"""

from __future__ import annotations

import pytest
import typer
from typer._click import Context
from typer._click.exceptions import BadParameter
from typer._click.types import FloatParamType, IntParamType

from bat.cli import app, main
from bat.cli.output import EXIT_USAGE


def _numeric_options() -> list[tuple[str, object]]:
    commands = typer.main.get_command(app).commands
    return [(name, p) for name, command in sorted(commands.items()) for p in command.params
            if isinstance(p.type, IntParamType | FloatParamType)]


NUMERIC = _numeric_options()


def test_the_walk_finds_the_numeric_options():
    names = {(command, p.opts[0]) for command, p in NUMERIC}
    assert {("compare", "--remeasure"), ("analyze", "--iterations"), ("verify", "--random"),
            ("analyze", "--noise-alpha"), ("run", "--seed")} <= names
    assert len(NUMERIC) >= 35


@pytest.mark.parametrize(("command", "param"), NUMERIC, ids=[f"{c}{p.opts[0]}" for c, p in NUMERIC])
def test_every_numeric_option_refuses_a_number_past_its_range(command, param):
    ctx = Context(typer.main.get_command(app).commands[command])
    huge = ["1" + "0" * 30] + (["nan", "inf", "-inf"] if isinstance(param.type, FloatParamType) else [])
    for text in huge:
        with pytest.raises(BadParameter):
            param.process_value(ctx, text)
    assert param.process_value(ctx, param.default) == param.default  # the default is in range


@pytest.mark.parametrize("argv", [
    ["compare", "-t", "r=reference:random", "-b", "pnpoly", "--remeasure", "1" + "0" * 30, "-o", "cmp"],
    ["analyze", "-b", "pnpoly", "--iterations", "1" + "0" * 30, "-o", "an"],
    ["analyze", "-b", "pnpoly", "--noise-alpha", "nan", "-o", "an"],
    ["analyze", "-b", "pnpoly", "--noise-alpha", "0", "-o", "an"],
    ["verify", "-b", "pnpoly", "--random", "1" + "0" * 30],
])
def test_an_out_of_range_option_is_refused_before_anything_is_written(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == EXIT_USAGE
    assert list(tmp_path.iterdir()) == []
    err = capsys.readouterr().err
    culprit = next(a for a in argv if a in ("--remeasure", "--iterations", "--noise-alpha", "--random"))
    assert err.count("error:") == 1 and culprit in err


@pytest.mark.parametrize("value", ["1e30", "1.5", "3000000000"])
def test_a_custom_problem_size_keeps_the_kind_of_the_published_one(value, tmp_path, monkeypatch, capsys):
    """An integer problem size (pnpoly's n_points) given as 1e30 reached NumPy's shape as a float (an internal
    error); a fraction or a number past 2^31 - 1 of an integer size is refused before any work."""
    monkeypatch.chdir(tmp_path)
    assert main(["verify", "-b", "pnpoly", "--first", "--size", f'{{"n_points": {value}}}']) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "problem size n_points" in err
    assert list(tmp_path.iterdir()) == []
