"""Declared hyper-parameters: every library and reference tuner lists them; -O accepts exactly these."""

from __future__ import annotations

import numpy as np
import pytest

from bat.core.errors import TunerError
from bat.core.hyperparams import HyperParam, defaults
from bat.registry import make_tuner, tuner_class, tuner_names

DECLARING = [n for n in tuner_names() if not n.startswith("profile")]


@pytest.mark.parametrize("name", DECLARING)
def test_declared_defaults_build_the_default_tuner(name: str) -> None:
    """Every declared option exists on the tuner, and its default is what the tuner uses without -O."""
    cls, variant = tuner_class(name)
    params = cls.hyperparameters(variant)
    assert params is not None, name
    plain = make_tuner(name)
    tuned = make_tuner(name, [f"{p.name}={_text(p.default)}" for p in params])
    for p in params:
        value = (getattr(tuned, p.into)[p.name] if p.into else getattr(tuned, p.name))
        assert value == p.default, (name, p.name)
        if not p.into and not (name.startswith("smac") and p.name == "retrain_after"):
            assert getattr(plain, p.name) == p.default, (name, p.name)
        assert p.check(p.default, "x") == p.default  # the default lies inside its own range


def _text(value: object) -> str:
    import json

    return json.dumps(value)


def test_kernel_tuner_strategy_options_go_into_strategy_options() -> None:
    t = make_tuner("kernel_tuner:genetic_algorithm", ["popsize=12", "method=uniform", "max_stall=20"])
    assert t.strategy_options == {"popsize": 12, "method": "uniform"}
    assert t.max_stall == 20


@pytest.mark.parametrize(("name", "pair", "match"), [
    ("kernel_tuner:pso", "popsize=many", "popsize"),
    ("kernel_tuner:pso", "mutation_chance=3", "'mutation_chance'.*no such"),  # a genetic_algorithm option
    ("kernel_tuner:pso", "strategy=mls", "'strategy'.*no such"),  # the variant is the tuner's name
    ("reference:genetic", "population=1", r"population: 1 is not int in \[6, 64\]"),
    ("optuna", "n_ei_candidates=2.5", "n_ei_candidates"),
    ("optuna:random", "n_startup_trials=5", "no such"),  # random has no start-up phase
    ("smac", "n_jobs=3", "n_jobs"),
])
def test_undeclared_or_out_of_range_options_are_refused(name: str, pair: str, match: str) -> None:
    with pytest.raises(TunerError, match=match):
        make_tuner(name, [pair])


def test_sampling_and_grid_stay_in_range() -> None:
    rng = np.random.default_rng(0)
    p = HyperParam("x", "int", 20, 4, 100, log=True)
    draws = {p.sample(rng) for _ in range(200)}
    assert min(draws) >= 4 and max(draws) <= 100 and len(draws) > 20
    assert p.grid(3) == [4, 20, 100]
    assert HyperParam("b", "bool", True).grid(5) == [False, True]
    assert defaults((p,)) == {"x": 20}
    with pytest.raises(ValueError, match="low <= high"):
        HyperParam("y", "float", 1.0, 2.0, 1.0)


def test_cli_lists_options_and_refuses_an_undeclared_one(capsys: pytest.CaptureFixture[str]) -> None:
    from bat.cli import main

    assert main(["list", "tuners", "--options"]) == 0
    out = capsys.readouterr().out
    assert "n_ei_candidates" in out and "mutation_chance" in out and "initial_step" in out
    code = main(["run", "-t", "kernel_tuner:pso", "-O", "nosuch=1", "-b", "pnpoly", "-n", "3",
                 "--out", "unused.parquet"])
    err = capsys.readouterr().err
    assert code == 2 and "'nosuch'" in err and len(err.strip().splitlines()) == 1


def test_options_file_feeds_run_and_campaign(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    from bat.analysis.compare.study import plan_campaign
    from bat.campaign.design import RunSpec, TunerSpec
    from bat.cli import main
    from bat.core.hyperparams import read_options_file, write_options_file

    path = tmp_path / "best.json"
    write_options_file(path, "reference:genetic", {"population": 8, "mutation_rate": 0.25})
    assert read_options_file(path) == ("reference:genetic", ("mutation_rate=0.25", "population=8"))
    c = plan_campaign(tuners=["reference:genetic", "reference:random"], benchmarks=["pnpoly"], budgets=[5],
                      repeats=1, tuner_options=[str(path)])
    built = c.tuners[0].build()
    assert (built.population, built.mutation_rate) == (8, 0.25) and c.tuners[1].options == ()
    plain = RunSpec(TunerSpec("g", "reference:genetic"), "pnpoly", "RTX_3090", 0, 1, (5,), 0, "replay")
    tuned = RunSpec(c.tuners[0], "pnpoly", "RTX_3090", 0, 1, (5,), 0, "replay")
    assert plain.run_id != tuned.run_id  # runs at the defaults keep the ids they had before options existed
    assert plain.run_id == RunSpec(TunerSpec("g", "reference:genetic", ()), "pnpoly", "RTX_3090", 0, 1, (5,), 0,
                                   "replay").run_id
    trace = tmp_path / "t.parquet"
    assert main(["run", "-t", "reference:genetic", "--tuner-options", str(path), "-b", "pnpoly", "-n", "5",
                 "--out", str(trace)]) == 0
    same = tmp_path / "same.parquet"
    assert main(["run", "-t", "reference:genetic", "-O", "population=8", "-O", "mutation_rate=0.25", "-b", "pnpoly",
                 "-n", "5", "--out", str(same)]) == 0
    from bat.core.trace import read_trace

    cols = ["between_method", "block_size_x", "tile_size", "use_method"]
    assert read_trace(trace)[0][cols].equals(read_trace(same)[0][cols])
    capsys.readouterr()
    assert main(["run", "-t", "reference:random", "--tuner-options", str(path), "-b", "pnpoly", "-n", "5",
                 "--out", str(tmp_path / "u.parquet")]) == 2
    assert "written for tuner reference:genetic" in capsys.readouterr().err
    assert not (tmp_path / "u.parquet").exists()
