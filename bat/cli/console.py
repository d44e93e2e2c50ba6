"""The consoles every command prints to: results on stdout, errors on stderr."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

console = Console()
err_console = Console(stderr=True)


def shown_path(path: Path) -> str:
    """A path relative to the current folder when it lies inside it, else as it is."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
