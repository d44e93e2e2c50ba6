"""bat hypertune: checks before anything runs, the outer search, the end-to-end command, resume after kill -9."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from bat.analysis.hypertune.driver import hypertune, plan, setting_of
from bat.analysis.hypertune.search import next_batch
from bat.analysis.hypertune.space import declared, search_space
from bat.analysis.hypertune.splits import HypertuneError, make_split
from bat.cli import main

TRAIN = "pnpoly_RTX_3090,pnpoly_RTX_2080_Ti"
HELD = "pnpoly_RTX_Titan"
SMALL = ["-t", "reference:genetic", "--params", "population,mutation_rate", "--budget", "20", "-r", "2",
         "--final-repeats", "3"]


@pytest.mark.parametrize(("args", "message"), [
    (["--params", "nosuch"], "--params 'nosuch'"),
    (["--range", "population=4.5:9"], "--range 'population=4.5:9'"),  # an int option given float bounds
    (["--range", "population=9:4"], "LOW <= HIGH"),
    (["--search", "nosuch"], "--search nosuch"),
    (["--settings", "0"], "--settings must be >= 1"),
])
def test_bad_input_is_one_line_exit_2_nothing_written(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      args: list[str], message: str) -> None:
    out = tmp_path / "out"
    code = main(["hypertune", *SMALL, "--train", TRAIN, "--heldout", HELD, *args, "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.parametrize(("sets", "message"), [
    (["--train", TRAIN], "held-out set is empty"),
    (["--heldout", HELD], "training set is empty"),
    (["--train", TRAIN, "--heldout", "pnpoly_RTX_3090"], "pnpoly/RTX_3090 is also in the training set"),
    (["--split", "gpus:RTX_3090,RTX_2080_Ti,RTX_Titan,RTX_3060_laptop", "--pool",
      "pnpoly_RTX_3090,pnpoly_RTX_Titan"], "not in the pool"),
])
def test_bad_splits_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], sets: list[str],
                                message: str) -> None:
    code = main(["hypertune", *SMALL, *sets, "-o", str(tmp_path / "out")])
    assert code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_leave_gpus_and_benchmarks_out() -> None:
    pool = ["pnpoly_RTX_3090", "pnpoly_RTX_Titan", "gemm_RTX_3090", "gemm_RTX_Titan"]
    by_gpu = make_split(pool=pool, split="gpus:RTX_Titan")
    assert {g for _, g, _ in by_gpu.heldout} == {"RTX_Titan"} and {g for _, g, _ in by_gpu.train} == {"RTX_3090"}
    by_bench = make_split(pool=pool, split="benchmarks:gemm")
    assert {b for b, _, _ in by_bench.heldout} == {"gemm"} and {b for b, _, _ in by_bench.train} == {"pnpoly"}
    with pytest.raises(HypertuneError, match="training set is empty"):
        make_split(pool=pool, split="gpus:RTX_Titan,RTX_3090")


def _fake_score(config: dict) -> float:
    """A made-up landscape for the searcher tests (no campaign is run)."""
    return -abs(config["population"] - 24) / 10 - abs(config["mutation_rate"] - 0.3)


@pytest.mark.parametrize("searcher", ["reference:random", "reference:grid", "optuna"])
def test_searchers_propose_distinct_settings_until_the_count(searcher: str) -> None:
    params = tuple(p for p in declared("reference:genetic") if p.name in ("population", "mutation_rate"))
    space = search_space("reference:genetic", params, 6, 12 if searcher == "reference:grid" else None)
    scores: dict[tuple, float] = {}

    def known(config: dict) -> float | None:
        return scores.get(tuple(sorted(config.items())))

    while (left := 12 - len(scores)) > 0 and (batch := next_batch(searcher, space, 12, min(3, left), 0, known)):
        assert len(batch) <= 3
        for c in batch:
            key = tuple(sorted(c.items()))
            assert key not in scores  # a setting is never evaluated twice
            scores[key] = _fake_score(setting_of(params, c))
    assert len(scores) == 12


def test_random_search_proposes_the_same_settings_whatever_the_batch() -> None:
    params = tuple(p for p in declared("reference:genetic") if p.name in ("population", "mutation_rate"))
    space = search_space("reference:genetic", params, 8)
    tried = []
    for batch in (1, 5):
        scores: dict[tuple, float] = {}
        while configs := next_batch("reference:random", space, 10, batch, 3,
                                    lambda c, s=scores: s.get(tuple(sorted(c.items())))):
            for c in configs:
                scores[tuple(sorted(c.items()))] = _fake_score(setting_of(params, c))
        tried.append(list(scores))
    assert tried[0] == tried[1]


def test_end_to_end_writes_options_report_and_is_reused(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    out = tmp_path / "ht"
    args = ["hypertune", *SMALL, "--train", TRAIN, "--heldout", HELD, "-n", "3", "-o", str(out)]
    assert main(args) == 0
    text = capsys.readouterr()
    body = json.loads((out / "hypertune.json").read_text())
    finals = 2 if body["best"] == body["defaults"] else 4  # best and defaults on both sets
    total = 4 + finals  # 4 settings, then the final runs
    # each phase against its own total, which never shrinks under the user's eyes
    search = [line for line in text.err.splitlines() if line.startswith("search: settings tried ")]
    final = [line for line in text.err.splitlines() if line.startswith("final: final runs ")]
    assert search[0].startswith("search: settings tried 0/4,") and search[-1].startswith("search: settings tried 4/4,")
    assert final[0].startswith(f"final: final runs 0/{finals},") and final[-1].startswith(
        f"final: final runs {finals}/{finals},")
    assert "generalisation gap" in text.out
    assert len(body["tried"]) == 4  # three proposed and the defaults
    scores = [t["score"] for t in body["tried"]]
    assert scores == sorted(scores, reverse=True) and body["best"] == body["tried"][0]["setting"]
    for name in ("train", "heldout"):
        f = body["final"][name]
        assert f["improvement"]["score"] == pytest.approx(f["best"]["score"] - f["defaults"]["score"])
        assert f["best"]["ci_low"] <= f["best"]["score"] <= f["best"]["ci_high"]
    assert body["final"]["generalisation_gap"] == pytest.approx(
        body["final"]["train"]["improvement"]["score"] - body["final"]["heldout"]["improvement"]["score"])
    assert set(body["final"]["heldout"]["best"]["per_target"]) == {"pnpoly/RTX_Titan"}
    report = (out / "report.md").read_text()
    assert "| heldout |" in report and "Generalisation gap" in report
    assert all((out / "figures" / f).stat().st_size > 1000
               for f in ("settings.png", "best_vs_defaults.png", "per_dataset.png"))
    # the options file is what bat compare takes; its tuner gets the best setting
    from bat.analysis.compare.study import plan_campaign

    c = plan_campaign(tuners=["reference:genetic"], benchmarks=["pnpoly"], budgets=[5], repeats=1,
                      tuner_options=[str(out / "best-options.json")])
    built = c.tuners[0].build()
    assert (built.population, built.mutation_rate) == (body["best"]["population"], body["best"]["mutation_rate"])
    assert main(args) == 0  # a rerun runs nothing
    assert f"units run 0, reused {total}" in capsys.readouterr().out.replace("\n", " ")


KILLED = textwrap.dedent(
    """
    import sys
    from bat.analysis.hypertune.driver import hypertune, plan
    from bat.analysis.hypertune.splits import make_split
    split = make_split(train=["pnpoly_RTX_3090", "pnpoly_RTX_2080_Ti"], heldout=["pnpoly_RTX_Titan"])
    p = plan(tuner="reference:genetic", split=split, params=["population", "mutation_rate"], settings=10,
             budget=100, repeats=4, final_repeats=3)
    hypertune(p, sys.argv[1], workers=2, report=False)
    """
)


def _stored(folder: Path) -> set[str]:
    path = folder / "units.sqlite"
    if not path.exists():
        return set()
    try:
        with sqlite3.connect(path) as db:
            return {row[0] for row in db.execute("SELECT key FROM units")}
    except sqlite3.OperationalError:  # the table is not made yet
        return set()


def test_resumes_after_kill_minus_nine_without_repeating_finished_units(tmp_path: Path) -> None:
    out = tmp_path / "ht"
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(out)], start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None and len(_stored(out)) < 3:
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and its workers, mid-search
        proc.wait()
    kept = _stored(out)
    assert len(kept) >= 3, "the hypertune should have stored units before the kill"
    split = make_split(train=TRAIN.split(","), heldout=[HELD])
    # 10 settings (the killed process's): each unit takes far longer than the poll, so the kill after 3 lands
    # with units left to run
    p = plan(tuner="reference:genetic", split=split, params=["population", "mutation_rate"], settings=10,
             budget=100, repeats=4, final_repeats=3)
    done = hypertune(p, out, workers=1, report=False)
    assert len(kept) < len(_stored(out)), "the kill should land before the end"
    assert done.reused == len(kept)  # every unit stored before the kill is reused, none run again
    assert done.executed + done.reused == len(_stored(out)) and kept <= _stored(out)
    assert 10 <= len(done.tried) <= 11  # the defaults, unless random search drew them too


def test_a_setting_the_tuner_cannot_run_is_a_failed_unit_not_a_crash() -> None:
    from bat.analysis.hypertune.units import evaluate_unit, make_unit

    split = make_split(train=["pnpoly_RTX_3090"], heldout=[HELD])
    bad = make_unit("reference:genetic", {"population": 10, "elite": 12}, split.train, 10, 2, 0, "search")
    result = evaluate_unit(bad)  # elite >= population: the tuner refuses it when built
    assert result["score"] is None and "elite" in result["error"]
    good = evaluate_unit(make_unit("reference:genetic", {"population": 10}, split.train, 10, 2, 0, "search"))
    assert good["score"] is not None and len(good["per_target"]["pnpoly/RTX_3090"]) == 2
