"""One valid command line per ``bat`` command, for the batteries that put a bad value into each option.

Each writes (if at all) into the working folder, on the repository's own data; ``PUBLISHED`` stands for
the published pnpoly cache shipped in tests/fixtures and ``CMP`` for a comparison folder a test made.
``listing`` and ``bounded`` are what the batteries check and run under.
"""

from __future__ import annotations

import os
import resource
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PUBLISHED = str(Path(__file__).parent / "fixtures" / "published" / "pnpoly_RTX_3090.json.gz")
COMPARE = ["compare", "-t", "r=reference:random", "-b", "pnpoly", "--budgets", "5", "--repeats", "1"]
RUN = ["run", "-t", "reference:random", "-b", "pnpoly", "-n", "5"]
HYPERTUNE = ["hypertune", "-t", "reference:random", "--train", "pnpoly_RTX_3090", "--heldout", "pnpoly_RTX_3090",
             "-n", "1", "--budget", "5", "-r", "1", "--final-repeats", "1"]

#: command -> a valid command line of it
BASE: dict[str, list[str]] = {
    "analyze": ["analyze", "-b", "pnpoly", "--no-importance", "-o", "an"],
    "check": ["check", "pnpoly_RTX_3090"],
    "compare": [*COMPARE, "-o", "c"],
    "export": ["export", "gemm", "--to", "t1", "-o", "e.json"],
    "hypertune": [*HYPERTUNE, "--out", "h"],
    "import": ["import", PUBLISHED, "-o", "i.parquet", "-b", "pnpoly", "--gpu", "G"],
    "inspect": ["inspect", "-b", "pnpoly", "--random"],
    "leaderboard": ["leaderboard", "CMP", "--out", "site", "--key", "k.pem"],
    "list": ["list", "tuners"],
    "record": ["record", "-b", "pnpoly", "--sample", "2", "-o", "rec.parquet"],
    "run": [*RUN, "-o", "r.parquet"],
    "serve": ["serve", "-b", "pnpoly", "-o", "s.parquet"],
    "space": ["space", "pnpoly"],
    "verify": ["verify", "-b", "pnpoly", "--first"],
}


def listing(folder: Path) -> dict[str, tuple[int, int]]:
    """Size and modification time of everything below ``folder``, links not followed (a loop is listed)."""
    return {str(p): (os.lstat(p).st_size, os.lstat(p).st_mtime_ns) for p in folder.rglob("*")}


class _Hang(Exception):
    """A command line ran past the time ``bounded`` gave it."""


def _alarm(*_: object) -> None:
    raise _Hang


@contextmanager
def bounded(seconds: int, extra_bytes: int = 3 << 30) -> Iterator[None]:
    """An alarm past ``seconds`` and an address-space limit of ``extra_bytes`` more than now (a reader that
    took /dev/zero whole would fill the machine's memory instead of failing the test)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as fh:
        now = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (now + extra_bytes, hard))
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def run_bounded(argv: list[str], seconds: int = 60) -> int:
    """The exit status of ``bat.cli.main(argv)`` under ``bounded`` (the test fails naming the command line
    when it runs past ``seconds``)."""
    import pytest

    from bat.cli import main

    with bounded(seconds):
        try:
            code = main(argv)
        except _Hang:
            pytest.fail(f"bat {' '.join(argv)} ran past {seconds} s")
    return code
