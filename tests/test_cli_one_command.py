"""A command line that names a command gets a group of that command alone (bat.cli._command): the same help,
the same usage errors as the group of every command."""

from __future__ import annotations

from typing import Any

import pytest
import typer

from bat.cli import _command, app


def _run(command: Any, args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    try:
        command(args=args, standalone_mode=False, prog_name="bat")
    except typer.Exit:
        pass
    except Exception as exc:  # a usage error: its text is compared
        return capsys.readouterr().out, f"{type(exc).__name__}: {exc}"
    return capsys.readouterr().out, ""


@pytest.mark.parametrize("name", sorted(info.name for info in app.registered_commands if info.name))
def test_each_command_alone_helps_and_refuses_as_in_the_whole_group(name: str,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    whole = typer.main.get_command(app)
    alone = _command(name)
    assert alone is not _command("")  # a group of its own
    assert list(alone.commands) == [name]
    for args in ([name, "--help"], [name, "--no-such-option"]):
        expected = _run(whole, args, capsys)
        assert expected[0] or expected[1]
        assert _run(alone, args, capsys) == expected


def test_a_misspelt_command_is_told_every_name() -> None:
    assert set(_command("lst").commands) == {info.name for info in app.registered_commands}
