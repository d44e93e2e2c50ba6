"""The ``bat`` command: typer app; each command lives in its own module here.

``main`` is the one error path of every command. A user mistake (a bad
option or argument, a malformed file, an unknown name: ``BatError``, typer's
usage errors, an ``OSError`` on a path) prints one line naming the culprit
and exits 2; a command that worked and found something (a regression, a
flagged dataset, a failed verification) exits 3; an interruption exits 130;
anything else is a bug in BAT and prints one line with a hint to rerun with
``--debug``, exit 1 (bat.cli.output states the codes). ``--debug``,
``--json`` and ``--quiet`` are accepted anywhere on the command line.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError

from bat.cli import output
from bat.cli.output import EXIT_FOUND, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from bat.core import quarantine
from bat.core.errors import BatError

__all__ = ["EXIT_FOUND", "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "app", "main"]

DEBUG_FLAG, JSON_FLAG, QUIET_FLAGS = "--debug", "--json", ("--quiet", "-q")

#: how the app is made: ``app``, and the one-command apps of ``_command``
_APP: dict[str, Any] = {"name": "bat", "help": "BAT: a benchmark suite for GPU kernel autotuners.",
                        "no_args_is_help": True, "add_completion": True, "pretty_exceptions_enable": False}
app = typer.Typer(**_APP)


def _print_version(value: bool) -> None:
    if value:
        import bat

        output.say("bat {}", bat.__version__)
        output.document({"version": bat.__version__})
        raise typer.Exit(EXIT_OK)


@app.callback()
def _options(
    data_dir: Path = typer.Option(None, "--data-dir", envvar="BAT_DATA_DIR", show_envvar=True,
                                  help="Your data folder: imports, recordings and run traces go there "
                                       "(default ./bat-data)."),
    debug: bool = typer.Option(False, DEBUG_FLAG, help="Show the traceback of an error (accepted anywhere "
                                                       "on the command line)."),
    json_output: bool = typer.Option(False, JSON_FLAG, help="Print the result as one JSON document on stdout "
                                                            "(schemas: bat/schemas/cli/; accepted anywhere)."),
    quiet: bool = typer.Option(False, *QUIET_FLAGS, help="No progress lines (accepted anywhere)."),
    version: bool = typer.Option(False, "--version", help="Print the version and exit.", is_eager=True,
                                 callback=_print_version),
) -> None:
    """BAT: a benchmark suite for GPU kernel autotuners."""
    if data_dir is not None:  # worker processes inherit it through the environment
        from bat.core.userdata import check_folder_kind

        check_folder_kind(data_dir)
        os.environ["BAT_DATA_DIR"] = str(data_dir.resolve())


def _register() -> None:
    from bat.cli import data_cmd, list_cmd, run_cmd, serve_cmd, space_cmd

    list_cmd.register(app)
    space_cmd.register(app)
    run_cmd.register(app)
    serve_cmd.register(app)
    data_cmd.register(app)
    for optional in ("inspect_cmd", "verify_cmd", "record_cmd", "analyze_cmd", "compare_cmd", "check_cmd",
                     "hypertune_cmd", "leaderboard_cmd"):
        try:
            module = __import__(f"bat.cli.{optional}", fromlist=["register"])
        except ModuleNotFoundError as exc:
            if exc.name != f"bat.cli.{optional}":
                raise
            continue
        module.register(app)


class _Interrupted(Exception):
    """An interruption inside a command, carried past typer (which turns KeyboardInterrupt into a bare 130)."""


def _interruptible(command: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except KeyboardInterrupt as exc:
            raise _Interrupted() from exc

    return run


_register()
for _info in app.registered_commands:
    if _info.callback is not None:
        _info.callback = _interruptible(_info.callback)


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = _take_flag(args, (DEBUG_FLAG,))
    json_output = _take_flag(args, (JSON_FLAG,))
    quiet = _take_flag(args, QUIET_FLAGS)
    output.configure(json_output=json_output, quiet=quiet, command=_command_name(args))
    if json_output and output.mode.command == "serve":  # its stdout is the protocol's: not even an error there
        return _fail("bat serve speaks the protocol on stdout: --json is not available there", EXIT_USAGE, debug)
    quarantine.forget()
    try:
        code = _run(args, debug)
        if code in (EXIT_OK, EXIT_FOUND):  # whatever it showed rests on these: marked, in every command
            output.mark_quarantined(quarantine.seen())
        output.emit(code, output.mode.error if code in (EXIT_INTERNAL, EXIT_USAGE, EXIT_INTERRUPTED) else None)
    finally:  # the mode is this command line's: whatever runs next in this process prints normally
        output.configure(json_output=False, quiet=False, command="")
    return code


_COMMAND: dict[tuple[Any, ...], Any] = {}


def _command(name: str = "") -> Any:
    """The click command typer builds from ``app``, built once per set of command callbacks (typer rebuilds
    it on every call, reading every signature: most of the time of a short command line). A command line that
    names a command gets a group of that command alone (the others' signatures unread); any other (``bat``,
    ``bat --help``, a misspelt name, which is told the names there are) gets every command."""
    infos = [info for info in app.registered_commands if name and info.name == name] or app.registered_commands
    key = (name if infos is not app.registered_commands else "", *(id(info.callback) for info in infos))
    if key not in _COMMAND:
        _COMMAND.clear()
        from bat.cli.options import refuse_empty_values

        if infos is app.registered_commands:
            _COMMAND[key] = typer.main.get_command(app)
        else:
            one = typer.Typer(**_APP)
            one.registered_callback, one.registered_commands = app.registered_callback, infos
            _COMMAND[key] = typer.main.get_command(one)
        refuse_empty_values(_COMMAND[key])  # an empty text value is refused by every command alike
    return _COMMAND[key]


def _run(args: list[str], debug: bool) -> int:
    try:  # typer.Exit's code comes back
        code = _command(_command_name(args))(args=args, standalone_mode=False, prog_name="bat")
    except typer.Exit as exc:
        return exc.exit_code
    except _Interrupted as exc:  # a journalled run's (RunInterrupted) names its journal
        return _fail(str(exc.__cause__) or "interrupted", EXIT_INTERRUPTED, debug)
    except SystemExit as exc:  # typer's --install-completion / --show-completion end with sys.exit(0)
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    except BatError as exc:
        return _fail(str(exc), EXIT_USAGE, debug)
    except NoArgsIsHelpError:  # the help is printed: nothing to add
        return EXIT_USAGE
    except ClickException as exc:  # typer's own copy of click: usage errors
        return _fail(_usage_line(exc), EXIT_USAGE, debug)
    except KeyboardInterrupt as exc:  # a journalled run's (RunInterrupted) names its journal
        return _fail(str(exc) or "interrupted", EXIT_INTERRUPTED, debug)
    except OSError as exc:  # a path the user gave: missing, unwritable, a folder, a full disk
        return _fail(_os_line(exc), EXIT_USAGE, debug)
    except typer.Abort as exc:  # typer turns an unexpected end of input (EOFError) into this
        return _fail(_internal_line(exc.__cause__ or exc), EXIT_INTERNAL, debug)
    except Exception as exc:
        return _fail(_internal_line(exc), EXIT_INTERNAL, debug)
    return code if isinstance(code, int) else 0


def _take_flag(args: list[str], flags: tuple[str, ...]) -> bool:
    """Remove every one of ``flags`` before a ``--`` from ``args``; True when there was one."""
    end = args.index("--") if "--" in args else len(args)
    found = any(a in flags for a in args[:end])
    args[:end] = [a for a in args[:end] if a not in flags]
    return found


def _command_name(args: list[str]) -> str:
    """The command of a command line: its first word that is not an option (or its option's value)."""
    takes_value = {"--data-dir"}
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a in takes_value:
            skip = True
        elif not a.startswith("-"):
            return a
    return ""


def _fail(line: str, code: int, debug: bool) -> int:
    if debug:
        traceback.print_exc()
    output.error_line(line)
    output.mode.error = line
    return code


def _usage_line(exc: ClickException) -> str:
    """typer's usage message on one line, with the command's help hint and, for a bad command, the commands."""
    line = " ".join(exc.format_message().split())
    ctx = getattr(exc, "ctx", None) if isinstance(exc, UsageError) else None
    if ctx is None:
        return line
    list_commands = getattr(ctx.command, "list_commands", None)
    if list_commands is not None and "command" in line.lower():
        line = line.rstrip(".") + f"; commands: {', '.join(list_commands(ctx))}"
    return f"{line} (see `{ctx.command_path} --help`)"


def _os_line(exc: OSError) -> str:
    where = exc.filename if exc.filename is not None else "a file"
    other = f" -> {exc.filename2}" if exc.filename2 is not None else ""
    return f"{where}{other}: {exc.strerror or exc}"


def _internal_line(exc: BaseException) -> str:
    detail = " ".join(str(exc).split())[:300]
    return (f"internal error ({type(exc).__name__}{': ' + detail if detail else ''}); this is a bug in BAT: "
            f"rerun with {DEBUG_FLAG} for the traceback and report it")
