"""The C++ client (bat/protocol/cpp) through ``exec:``: same traces as its Python twin, the battery, the CLI.

The example is built with g++ (cached by source hash, tests/cpp_example.py)
and run on the replayed GEMM data of the repository. Its strategies are those
of tuner_adapters/portable_search.py, so for the same seed both give the
same trace, every column but the tuner's own time.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from cpp_example import example_binary

from bat.cli import main
from bat.core.dataset import Status
from bat.core.problem import Budget, EvalResult
from bat.core.space import Constraint, Parameter, SearchSpace
from bat.core.trace import read_trace
from bat.registry import make_tuner
from bat.run.driver import run_tuner
from bat.run.targets import Target, replay_target
from bat.testing import check_tuner
from bat.tuner_adapters.portable_search import PortableSearch


@pytest.fixture(scope="module")
def cpp(request, tmp_path_factory) -> Path:
    cache = getattr(request.config, "cache", None)  # None under -p no:cacheprovider: build in a temporary folder
    return example_binary(Path(cache.mkdir("bat-cpp")) if cache else tmp_path_factory.mktemp("bat-cpp"))


@pytest.fixture(scope="module")
def gemm() -> Target:
    return replay_target("gemm", "RTX_3090")


def same_trace(a: pd.DataFrame, b: pd.DataFrame) -> None:
    cols = [c for c in a.columns if c != "tuner_s"]
    pd.testing.assert_frame_equal(a[cols], b[cols], check_exact=True)


@pytest.mark.parametrize(("strategy", "budget", "seed", "args"), [
    ("random", Budget(max_evals=150), 3, ""),
    ("local", Budget(max_evals=150), 3, ""),
    ("local", Budget(max_evals=40), 12345, " --single"),
    ("random", Budget(max_time_s=30.0), 5, " --single"),
])
def test_the_cpp_example_and_its_python_twin_give_the_same_trace(cpp, gemm, strategy, budget, seed, args):
    external = run_tuner(make_tuner(f"exec:{cpp} --strategy {strategy}{args}"), gemm, budget=budget, seed=seed)
    twin = run_tuner(PortableSearch(strategy=strategy), gemm, budget=budget, seed=seed)
    assert external.trace_meta["tuner_report"]["ended"] == "done"
    assert external.trace_meta["tuner_report"]["exit_status"] == 0
    assert len(external.trace) >= external.evaluated > 10
    same_trace(external.trace, twin.trace)
    assert external.best.objective_ms == twin.best.objective_ms


@pytest.mark.parametrize("strategy", ["random", "local"])
def test_the_cpp_example_and_its_twin_pass_the_tuner_battery(cpp, strategy):
    check_tuner(lambda: make_tuner(f"exec:{cpp} --strategy {strategy}"))
    check_tuner(lambda: PortableSearch(strategy=strategy))


def test_bat_run_passes_arguments_after_the_double_dash(cpp, tmp_path, capsys):
    out = tmp_path / "t.parquet"
    code = main(["run", "-b", "gemm", "-n", "25", "-s", "2", "-o", str(out), "--tuner", f"exec:{cpp}",
                 "--", "--strategy", "random"])
    stdout = capsys.readouterr().out
    assert code == 0 and "best time:" in stdout and "warning" not in stdout
    trace, meta = read_trace(out)
    assert int(trace["charged"].sum()) == 25
    assert meta["tuner"].endswith("--strategy random")
    assert meta["tuner_report"]["client"] == "bat_example_tuner random (C++)"


def test_a_bad_program_argument_is_a_failed_start(cpp, gemm):
    from bat.core.errors import TunerError

    with pytest.raises(TunerError, match="before its hello"):
        run_tuner(make_tuner(f"exec:{cpp} --strategy annealing"), gemm, budget=Budget(max_evals=5))


def test_bat_compare_runs_the_cpp_example_beside_optuna(cpp, tmp_path, capsys):
    out = tmp_path / "cmp"
    code = main(["compare", "--tuners", f"cpp=exec:{cpp} --strategy local,optuna", "--benchmarks", "gemm",
                 "--budgets", "10", "--repeats", "2", "--out", str(out), "--no-plots"])
    assert code == 0, capsys.readouterr().err
    summary = (out / "summary.md").read_text()
    assert "`cpp`" in summary and "`optuna`" in summary
    assert "cpp: score" in capsys.readouterr().out


class _Words:
    """Backend for a space of awkward values: time from the values' lengths and sizes."""

    name = "words"

    def describe(self) -> str:
        return "words backend"

    def evaluate(self, config):
        ms = 1.0 + len(config["word"]) + config["scale"] * config["n"]
        return EvalResult(config=dict(config), status=Status.OK, objective_ms=ms, times_ms=(ms,), cost_s=0.1)

    def close(self) -> None:
        pass


def test_strings_with_escapes_and_floats_round_trip_through_the_cpp_client(cpp, tmp_path):
    """Every value comes back from C++ as exactly the space's own value (JSON escapes, UTF-8, 17 digits)."""
    space = SearchSpace("words", [
        Parameter("word", ("plain", "na\u00efve", 'quote"d', "back\\slash", "tab\there", "rocket \U0001f680")),
        Parameter("scale", (0.1, 1e-7, 2.5, 1 / 3)),
        Parameter("n", (-3, 0, 7)),
    ], [Constraint("n != 0 or scale < 1")])
    target = Target("words", "none", space, _Words(), None)
    total = space.count_valid()
    log = tmp_path / "transcript.jsonl"
    external = run_tuner(make_tuner(f"exec:{cpp} --strategy random", [f"transcript={log}"]), target,
                         budget=Budget(max_evals=total + 5), seed=1)
    report = external.trace_meta["tuner_report"]
    assert report["errors"] == 0 and report["ended"] == "done"
    assert external.evaluated == total == len(external.trace)
    twin = run_tuner(PortableSearch(strategy="random"), target, budget=Budget(max_evals=total + 5), seed=1)
    same_trace(external.trace, twin.trace)
    assert set(external.trace["word"]) == set(space.parameters[0].values)
    assert log.read_text().count('"from":"client"') == report["requests"]
