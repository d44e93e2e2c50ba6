"""A tuner and a backend from an installed third-party package: pip-installed, listed, used by ``bat run``.

The package is written and built here (setuptools, no network), installed
with pip into a temporary folder, and put on the ``PYTHONPATH`` of the
subprocess that runs a test's ``bat`` commands: the registry finds its ``bat.tuners`` entry point in
the installed metadata. Nothing in this repository names it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from bat.core.trace import read_trace

PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "bat-first-valid-example"
version = "0.1.0"

[project.entry-points."bat.tuners"]
first_valid = "bat_first_valid:FirstValid"

[project.entry-points."bat.backends"]
constant = "bat_first_valid:CONSTANT"
"""

MODULE = '''\
"""A third-party tuner: the valid configurations in rank order."""

from dataclasses import dataclass

import numpy as np

from bat.core.dataset import Status
from bat.core.problem import EvalResult
from bat.core.tuner import Tuner
from bat.run.targets import BackendProvider, Offer, Target


@dataclass(kw_only=True)
class FirstValid(Tuner):
    """The first valid configurations, in rank order."""

    summary = "third-party example: valid configurations in rank order"
    offset: int = 0

    def tune(self, problem, rng):
        space = problem.space
        rank = self.offset
        while not problem.exhausted and rank < space.count_valid():
            problem.evaluate(space.config(space.unrank_valid(np.array([rank]))[0]))
            rank += 1


class Constant:
    """A third-party backend: every configuration takes 1 ms."""

    name = "constant"

    def describe(self):
        return "a constant-time stand-in device"

    def evaluate(self, config):
        return EvalResult(config=dict(config), status=Status.OK, objective_ms=1.0, times_ms=(1.0,))

    def close(self):
        pass


def offer(bench, request):
    """It serves ``auto`` for pnpoly only, ahead of every backend of BAT's own."""
    return Offer(1000, "the constant device serves pnpoly") if bench.name == "pnpoly" else None


CONSTANT = BackendProvider(make=lambda bench, request: Target(bench.name, "constant", bench.space, Constant(), None),
                           offer=offer, why="on the constant device")
'''


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The example package, built and pip-installed into a folder of its own; that folder."""
    root = tmp_path_factory.mktemp("plugin")
    source, target = root / "src", root / "site"
    source.mkdir()
    (source / "pyproject.toml").write_text(PYPROJECT)
    (source / "bat_first_valid.py").write_text(MODULE)
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                           "--disable-pip-version-check", "--quiet", "--target", str(target), str(source)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert list(target.glob("bat_first_valid_example-0.1.0.dist-info/entry_points.txt"))
    return target


#: the child that runs ``bat`` commands one after another in one process, each as the shell would (its exit
#: code, its output), and prints what each did as JSON: one process start serves several commands
CHILD = textwrap.dedent("""
    import contextlib, io, json, sys
    from bat.cli import main

    done = []
    for args in json.loads(sys.argv[1]):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(args)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
        done.append({"returncode": code, "stdout": out.getvalue(), "stderr": err.getvalue()})
    print(json.dumps(done))
""")


def bat(site: Path, *commands: list[str]) -> list[SimpleNamespace]:
    """Each of ``commands`` run by ``bat`` in one subprocess whose ``PYTHONPATH`` starts with ``site``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])]),
           "COLUMNS": "200"}
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(commands)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [SimpleNamespace(**one) for one in json.loads(proc.stdout.splitlines()[-1])]


def test_an_installed_package_adds_a_tuner(installed, tmp_path):
    out = tmp_path / "t.parquet"
    listed, ran = bat(installed, ["list", "tuners"],
                      ["run", "--tuner", "first_valid", "-O", "offset=2", "--benchmark", "pnpoly", "--budget", "4",
                       "--out", str(out)])
    assert listed.returncode == 0, listed.stderr
    assert "first_valid" in listed.stdout and "third-party example" in listed.stdout
    assert ran.returncode == 0, ran.stderr
    trace, meta = read_trace(out)
    assert meta["tuner"] == "first_valid" and int(trace["charged"].sum()) == 4


def test_without_the_package_the_tuner_is_unknown(tmp_path):
    (ran,) = bat(tmp_path, ["run", "--tuner", "first_valid", "--benchmark", "pnpoly", "--budget", "4"])
    assert ran.returncode == 2 and "unknown tuner 'first_valid'" in ran.stderr


def test_an_installed_backend_takes_part_in_auto(installed, tmp_path):
    runs = [["run", "-t", "reference:random", "-b", bench, "-n", "3", "-o", str(tmp_path / f"{bench}.parquet")]
            for bench in ("pnpoly", "gemm")]
    listed, ran, other = bat(installed, ["list", "backends"], *runs)
    assert listed.returncode == 0 and "constant" in listed.stdout, listed.stderr
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines()[0].startswith("the constant device serves pnpoly: a constant-time stand-in device")
    assert "best time: 1.0000 ms" in ran.stdout
    assert other.returncode == 0 and other.stdout.startswith("no GPU found: replaying"), other.stderr  # offers nothing
