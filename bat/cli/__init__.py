"""The ``bat`` command: typer app; each command lives in its own module here.

Errors that BAT raises on purpose (``BatError``) and bad arguments become one
line on stderr and exit status 2.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from bat.cli.console import err_console
from bat.errors import BatError

app = typer.Typer(
    name="bat",
    help="BAT: a benchmark suite for GPU kernel autotuners.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _options(
    data_dir: Path = typer.Option(None, "--data-dir", envvar="BAT_DATA_DIR", show_envvar=True,
                                  help="Your data folder: imports, recordings and run traces go there "
                                       "(default ./bat-data)."),
) -> None:
    """BAT: a benchmark suite for GPU kernel autotuners."""
    if data_dir is not None:  # worker processes inherit it through the environment
        os.environ["BAT_DATA_DIR"] = str(data_dir.resolve())


def _register() -> None:
    from bat.cli import data_cmd, list_cmd, run_cmd, serve_cmd, space_cmd

    list_cmd.register(app)
    space_cmd.register(app)
    run_cmd.register(app)
    serve_cmd.register(app)
    data_cmd.register(app)
    for optional in ("inspect_cmd", "verify_cmd", "record_cmd", "analyze_cmd", "compare_cmd", "check_cmd"):
        try:
            module = __import__(f"bat.cli.{optional}", fromlist=["register"])
        except ModuleNotFoundError as exc:
            if exc.name != f"bat.cli.{optional}":
                raise
            continue
        module.register(app)


_register()


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, turning BatError into one line and exit status 2."""
    try:
        code = app(args=argv, standalone_mode=False)  # click returns typer.Exit's code here
    except BatError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        return 2
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        err_console.print("aborted")
        return 130
    except Exception as exc:  # click's usage errors
        import click

        if isinstance(exc, click.ClickException):
            exc.show(file=sys.stderr)
            return 2
        raise
    return code if isinstance(code, int) else 0
