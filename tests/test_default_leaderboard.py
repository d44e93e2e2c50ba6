"""The default leaderboard's command (bench/default_leaderboard.py) runs every registered tuner or says why not,
and its site shows the transfer study beside the campaign."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from bat.cli import EXIT_OK, main
from bat.registry import tuner_names

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "default_leaderboard.py"


def _script():
    spec = importlib.util.spec_from_file_location("default_leaderboard", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_registered_tuner_is_run_or_left_out_with_its_reason() -> None:
    script = _script()
    chosen, left = script.campaign_tuners(["smac:bo"])
    assert "smac:bo" in left and "smac:bo" not in chosen and "smac" in chosen
    assert not set(chosen) & set(left) and all(why for why in left.values())
    transfer = {f"transfer:{k}" for k in script.TRANSFER}  # the transfer study's tuners
    profile = {n for n in tuner_names() if n.split(":")[0] == "profile"}  # "profile (all variants)" in left
    assert "profile (all variants)" in left
    assert set(tuner_names()) == set(chosen) | (set(left) - {"profile (all variants)"}) | transfer | profile


def test_the_site_step_reads_the_campaign_and_the_transfer_study(tmp_path) -> None:
    from test_leaderboard import RANDOM, _run

    work = tmp_path / "work"
    _run(work / "campaign", (RANDOM,), (("pnpoly", "RTX_3090"),))
    assert main(["compare", "--study", "transfer", "-t", "transfer:best,reference:random", "-b", "convolution_milo",
                 "--budgets", "4", "-r", "1", "--no-plots", "-o", str(work / "transfer")]) == EXIT_OK
    site = work / "site"
    assert main(_script().site_step(work, site)) == EXIT_OK
    standings = json.loads((site / "standings.json").read_text())
    assert [r["tuner"] for r in standings["overall"]] == ["reference:random"]
    assert [t["label"] for t in standings["transfer"][0]["tuners"]] == ["transfer:best", "reference:random"]
    assert main(["leaderboard", "--verify", str(site)]) == EXIT_OK
