"""Every path option of every command, given every kind of special file (issue 43, class 3, audited whole).

The battery walks the commands typer builds: each option or argument typed as a path must have a command
line below that puts it to use, so a path option added later without a case fails
``test_every_path_option_has_a_case``. Each case then gets, in place of that path, a folder, a FIFO, a
device, a loop of symbolic links, a symbolic link to nothing, a sparse file of 10 GiB, an empty file and a
path that runs through a file. The property: never an internal error (exit 1) nor a hang; a refusal
(exit 2) is one ``error:`` line that leaves the working folder as it was; and a FIFO, a device, a link
loop, a dangling link or a file past the readers' limits is always refused.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import typer
from command_lines import COMPARE, HYPERTUNE, PUBLISHED, RUN, listing, run_bounded

from bat.cli import app, main
from bat.cli.output import EXIT_FOUND, EXIT_OK, EXIT_USAGE

X = "X"

#: (command, parameter name) -> a command line using it, X standing for the special path
CASES: dict[tuple[str, str], list[str]] = {
    # one GPU's data: the same steps and files as four, a quarter of the figures to draw for each case
    ("analyze", "out"): ["analyze", "-b", "pnpoly", "-g", "RTX_3090", "--no-importance", "-o", X],
    ("analyze", "traces"): ["analyze", "-b", "pnpoly", "-g", "RTX_3090", "--no-importance", "-o", "an", "--trace", X],
    ("compare", "out"): [*COMPARE, "-o", X],
    ("compare", "tuner_options"): [*COMPARE, "-o", "c", "--tuner-options", X],
    ("compare", "baseline"): [*COMPARE, "-o", "c", "--baseline", X],
    ("compare", "sealed"): [*COMPARE, "-o", "c", "--sealed", X],
    ("export", "out"): ["export", "gemm", "--to", "t1", "-o", X],
    ("import", "file"): ["import", X, "-o", "i.parquet", "-b", "pnpoly", "--gpu", "G"],
    ("import", "out"): ["import", "PUBLISHED", "-o", X, "-b", "pnpoly", "--gpu", "G"],
    ("leaderboard", "results"): ["leaderboard", X, "--out", "site", "--key", "k.pem"],
    ("leaderboard", "out"): ["leaderboard", "CMP", "--out", X, "--key", "k.pem"],
    ("leaderboard", "key"): ["leaderboard", "CMP", "--out", "site", "--key", X],
    ("leaderboard", "check"): ["leaderboard", "--verify", X],
    ("run", "out"): [*RUN, "-o", X],
    ("run", "tuner_options"): [*RUN, "-o", "r.parquet", "--tuner-options", X],
    ("serve", "out"): ["serve", "-b", "pnpoly", "-o", X],
    ("serve", "socket_path"): ["serve", "-b", "pnpoly", "-o", "s.parquet", "--socket", X],
    ("serve", "transcript"): ["serve", "-b", "pnpoly", "-o", "s.parquet", "--transcript", X],
    ("verify", "source"): ["verify", "-b", "pnpoly", "--first", "--source", X],
    ("hypertune", "out"): [*HYPERTUNE, "--out", X],
    ("hypertune", "hub"): [*HYPERTUNE, "--out", "h", "--hub", X],
    ("record", "out"): ["record", "-b", "pnpoly", "--sample", "2", "-o", X],
}
#: paths given as text (a benchmark's space file, a dataset, a file to check or export)
TEXT_CASES: dict[str, list[str]] = {
    "run --benchmark": [*RUN[:4], "-b", X, "-n", "5", "-o", "r.parquet"],
    "run --dataset": [*RUN, "--dataset", X, "-o", "r.parquet"],
    "space NAME": ["space", X],
    "check DATASETS": ["check", X],
    "export SOURCE": ["export", X, "--to", "t1", "-o", "e.json"],
    "hypertune --train": [*HYPERTUNE[:4], X, *HYPERTUNE[5:], "--out", "h"],
    "--data-dir": ["--data-dir", X, *RUN, "-o", "r.parquet"],
}


def _loop(p: Path) -> None:
    p.symlink_to(p.name + ".other")
    p.with_name(p.name + ".other").symlink_to(p.name)


def _sparse(p: Path) -> None:
    with open(p, "wb") as fh:
        fh.truncate(10 << 30)


KINDS: dict[str, Callable[[Path], None]] = {
    "folder": lambda p: p.mkdir(),
    "fifo": lambda p: os.mkfifo(p),
    "device": lambda p: p.symlink_to(Path(os.devnull).with_name("zero")),  # reading it whole would fill memory
    "link-loop": _loop,
    "dangling-link": lambda p: p.symlink_to(Path("nowhere") / "at" / "all"),
    "sparse-10GiB": _sparse,
    "empty": lambda p: p.write_bytes(b""),
    "through-a-file": lambda p: (p.parent / "f").write_text("x"),
}
#: kinds no command may accept, wherever the path goes
ALWAYS_REFUSED = {"fifo", "device", "link-loop", "dangling-link", "sparse-10GiB"}


def _path_params() -> set[tuple[str, str]]:
    commands = typer.main.get_command(app).commands
    return {(name, p.name) for name, command in commands.items() for p in command.params
            if type(p.type).__name__ == "TyperPath"}


def test_every_path_option_has_a_case():
    assert _path_params() == set(CASES)


@pytest.fixture(scope="module")
def comparison(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real comparison folder, for the leaderboard's cases."""
    folder = tmp_path_factory.mktemp("cmp")
    os.environ["BAT_DATA_DIR"] = str(folder / "bat-data")
    try:
        assert main([*COMPARE, "-o", str(folder / "CMP")]) == EXIT_OK
    finally:
        del os.environ["BAT_DATA_DIR"]
    return folder / "CMP"


ALL = [*(" ".join(k) for k in CASES), *TEXT_CASES]


@pytest.mark.slow  # 225 command lines: about 45 s on the 2-core box
@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("case", ALL)
def test_a_special_path_is_refused_in_one_line_or_used(case, kind, comparison, tmp_path, monkeypatch, capsys):
    argv = CASES.get(tuple(case.split(" ")), TEXT_CASES.get(case))  # type: ignore[call-overload]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BAT_DATA_DIR", str(tmp_path / "bat-data"))
    shutil.copytree(comparison, tmp_path / "CMP")
    KINDS[kind](tmp_path / X)
    target = str(Path("f") / X) if kind == "through-a-file" else X
    argv = [target if a == X else PUBLISHED if a == "PUBLISHED" else a for a in argv]
    before = listing(tmp_path)
    code = run_bounded(argv, 60)
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert code in (EXIT_OK, EXIT_USAGE, EXIT_FOUND), err
    assert "internal error" not in err
    if kind in ALWAYS_REFUSED:
        assert code == EXIT_USAGE, (out, err)
    if code == EXIT_USAGE:
        assert len(lines) == 1 and lines[0].startswith("error:"), err
        assert listing(tmp_path) == before, err
