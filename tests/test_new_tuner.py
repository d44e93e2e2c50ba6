"""docs/new-tuner.md's worked example, run as the page shows it: the tuner's file, the script beside it, the command."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "new-tuner.md"


def blocks() -> dict[str, str]:
    """The page's Python blocks by the file name on their first line (``# hill_climb.py``)."""
    found = re.findall(r"```python\n# (\S+\.py)\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    return {name: body for name, body in found}


def test_the_example_tuner_is_short() -> None:
    code = [line for line in blocks()["hill_climb.py"].splitlines() if line.strip()]
    assert 20 <= len(code) <= 40, len(code)


@pytest.mark.slow  # about 10 s: the battery's runs, two interpreters
def test_the_worked_example_runs_and_passes_the_battery(tmp_path) -> None:
    for name, body in blocks().items():
        (tmp_path / name).write_text(body, encoding="utf-8")
    ran = subprocess.run([sys.executable, "try_it.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr[-3000:]
    first, last = ran.stdout.splitlines()[0], ran.stdout.splitlines()[-1]
    ratio = float(re.fullmatch(r"50 evaluations, best (\S+) x the best known", first).group(1))
    assert ratio >= 1.0 and last == "battery passed"
    bat = "import sys; from bat.cli import main; sys.exit(main(sys.argv[1:]))"
    cli = subprocess.run([sys.executable, "-c", bat, "run", "--tuner", "hill_climb:HillClimb", "--benchmark", "pnpoly",
                          "--budget", "12", "-o", "t.parquet"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600)
    assert cli.returncode == 0 and (tmp_path / "t.parquet").is_file(), cli.stderr
