"""Exit codes, the same for every command: 0 success, 1 internal error only, 2 bad input, 3 found something.

Also the small things a user expects from a command line: ``--version``, ``bat.__version__``,
shell completion, "did you mean", ``-b/--benchmark`` on every command that takes a benchmark,
and ``--tuner module:Class`` for a tuner in a single file.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import bat
from bat.cli import EXIT_FOUND, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, main

ROOT = Path(__file__).resolve().parents[1]


def test_the_codes_are_the_documented_ones():
    assert (EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_FOUND) == (0, 1, 2, 3)
    readme = (ROOT / "README.md").read_text()
    table = dict(re.findall(r"^\| (\d+) \| ([^|]+) \|$", readme, flags=re.M))
    assert set(table) == {"0", "1", "2", "3", "75", "130"}
    assert "internal error" in table["1"] and "bad input" in table["2"] and "found something" in table["3"]


@pytest.mark.parametrize("args", [
    ["list", "nothing"], ["space", "nope"], ["run", "-t", "nope", "-b", "gemm"], ["check", "-b", "nope"],
    ["verify", "-b", "pnpoly"], ["export", "nope", "--to", "t4", "--out", "x.json"],
    ["import", "missing.json"], ["analyze", "-b", "nope"], ["compare", "-t", "nope", "-b", "gemm"],
    ["inspect", "-b", "nope", "--first"], ["no-such-command"], ["run", "--no-such-option"],
    ["hypertune", "-t", "reference:random", "--train", "nope/X", "--heldout", "pnpoly/RTX_3090"],
    ["record", "-b", "pnpoly"], ["serve", "-b", "nope"],
])
def test_bad_input_exits_2_on_every_command(args, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(args) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error:"), err


def test_an_internal_error_and_only_that_exits_1(capsys, monkeypatch):
    import bat.cli.list_cmd as list_cmd

    def broken():
        raise ZeroDivisionError("a bug")

    monkeypatch.setitem(list_cmd.TABLES, list_cmd.What.tuners, (broken, list_cmd.tuners_table))
    assert main(["list", "tuners"]) == EXIT_INTERNAL
    assert "internal error (ZeroDivisionError: a bug)" in capsys.readouterr().err


def test_check_that_flags_a_dataset_exits_3_and_a_clean_one_0(capsys):
    assert main(["check", "-b", "pnpoly"]) == EXIT_FOUND  # two shipped Turing datasets are flagged
    assert main(["check", "pnpoly/RTX_3090"]) == EXIT_OK
    assert main(["check", "--benchmark", "pnpoly/RTX_3090"]) == EXIT_OK  # -b and the positional form agree


def test_version_and_dunder_version(capsys):
    assert main(["--version"]) == EXIT_OK
    printed = capsys.readouterr().out.strip()
    assert printed == f"bat {bat.__version__}" and re.fullmatch(r"\d+\.\d+\.\d+.*", bat.__version__)


def test_shell_completion_completes_command_names():
    env = {**os.environ, "_BAT_COMPLETE": "complete_bash", "COMP_WORDS": "bat li", "COMP_CWORD": "1"}
    done = subprocess.run([sys.executable, "-c", "import sys; from bat.cli import main; sys.exit(main())"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["list"], done.stderr
    helped = subprocess.run([sys.executable, "-c", "import sys; from bat.cli import main; sys.exit(main())", "--help"],
                            capture_output=True, text=True, timeout=60)
    assert "--install-completion" in helped.stdout  # it installs the script above for the user's shell


def test_did_you_mean_for_a_misspelt_name(capsys):
    assert main(["run", "-t", "optunaa", "-b", "gemm"]) == EXIT_USAGE
    assert "did you mean 'optuna'" in capsys.readouterr().err
    assert main(["space", "gemmm"]) == EXIT_USAGE
    assert "did you mean 'gemm'" in capsys.readouterr().err


def test_space_takes_the_benchmark_as_option_or_argument(capsys):
    assert main(["space", "-b", "pnpoly", "--json"]) == EXIT_OK
    by_option = capsys.readouterr().out
    assert main(["space", "pnpoly", "--json"]) == EXIT_OK
    assert capsys.readouterr().out == by_option
    assert main(["space", "pnpoly", "-b", "gemm"]) == EXIT_USAGE


def test_a_tuner_in_a_single_file_on_the_path(tmp_path, monkeypatch, capsys):
    (tmp_path / "my_tuner.py").write_text(textwrap.dedent("""
        from bat.tuner_adapters.reference.random_search import RandomSearch


        class Mine(RandomSearch):
            pass
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "t.parquet"
    assert main(["run", "--tuner", "my_tuner:Mine", "-b", "pnpoly", "-n", "5", "-o", str(out)]) == EXIT_OK
    assert out.exists()


def test_export_takes_the_benchmark_as_option_or_argument(tmp_path, capsys):
    assert main(["export", "-b", "gemm", "--to", "t1", "--out", str(tmp_path / "a.json")]) == EXIT_OK
    assert main(["export", "gemm", "--to", "t1", "--out", str(tmp_path / "b.json")]) == EXIT_OK
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text()
    assert main(["export", "--to", "t1", "--out", str(tmp_path / "c.json")]) == EXIT_USAGE
    assert not (tmp_path / "c.json").exists()


#: every command that takes a benchmark (or benchmarks): each must take it as -b too
TAKE_A_BENCHMARK = {"space", "run", "serve", "import", "export", "inspect", "verify", "record", "analyze", "compare",
                    "check"}


def test_every_command_that_takes_a_benchmark_takes_it_as_b():
    import typer

    from bat.cli import app

    commands = typer.main.get_command(app).commands
    taking = {name: [p for p in c.params if p.name in ("benchmark", "benchmarks")] for name, c in commands.items()}
    assert {name for name, params in taking.items() if params} == TAKE_A_BENCHMARK
    for name in TAKE_A_BENCHMARK:
        assert any("-b" in p.opts for p in taking[name]), f"bat {name} has no -b"
