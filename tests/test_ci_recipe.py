"""docs/CI.md's GitHub Actions recipe: its gate step, run as written, as a script.

The workflow's ``env`` block and its "Gate the tuner against the baseline" step are read from
the document; the baseline is made as "Make the baseline once" says (a compare run's
results.json, committed). A tuner like its baseline (the recipe's own ``my_tuner.py``, the baseline's
random search under another name) passes (exit 0); a worse one fails with
exit 3 and the regressed cell in the job summary; the report folder holds what is uploaded.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bat.cli import EXIT_FOUND, EXIT_OK, EXIT_USAGE, main

ROOT = Path(__file__).resolve().parents[1]
RANDOM = "mine=bat.tuner_adapters.reference.random_search:RandomSearch"
WORSE = "mine=bat.testing.crippled_tuner:FirstValidTuner"
#: the recipe's own case: ``my_tuner.py`` at the root of the tuner's checkout, found through PYTHONPATH=$PWD
MY_TUNER = ("from bat.tuner_adapters.reference.random_search import RandomSearch\n\n\n"
            "class MyTuner(RandomSearch):\n    pass\n")
#: the workflow's settings the tests change: 5 repeats instead of its 10 (each repeat of each benchmark is one
#: sandboxed run, most of a gate's CPU). Five are enough for the gate to find the worse tuner: its runs all do
#: worse than the baseline's five, a p-value of 2/252 per cell, below alpha (0.05) after Holm over the 4 cells
FEWER = {"REPEATS": "5"}


def settings(flow: dict) -> dict[str, str]:
    """The workflow's ``env`` with ``FEWER``'s settings."""
    return {**flow["env"], **FEWER}


def workflow() -> dict:
    text = (ROOT / "docs" / "CI.md").read_text()
    (block,) = re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
    return yaml.safe_load(block)


def gate_step(flow: dict) -> dict:
    (step,) = [s for s in flow["jobs"]["gate"]["steps"] if s.get("name") == "Gate the tuner against the baseline"]
    return step


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tuner project's checkout with its committed baseline (made with the settings its gate runs with)."""
    env = settings(workflow())
    repo = tmp_path_factory.mktemp("tuner-project")
    made = repo / "bat-baseline"
    assert main(["--quiet", "compare", "--tuners", RANDOM, "--benchmarks", env["BENCHMARKS"], "--gpus", env["GPUS"],
                 "--budgets", env["BUDGETS"], "--repeats", env["REPEATS"], "--out", str(made), "--no-plots",
                 "--isolate"]) == 0
    (repo / env["BASELINE"]).parent.mkdir(parents=True)
    shutil.copy(made / "results.json", repo / env["BASELINE"])
    shutil.rmtree(made)
    return repo


def run_gate(repo: Path, tuner: str, tmp_path: Path, files: dict[str, str] | None = None) -> tuple[int, str, Path]:
    flow = workflow()
    step = gate_step(flow)
    work = tmp_path / "checkout"
    shutil.copytree(repo, work)
    for name, text in (files or {}).items():
        (work / name).write_text(text)
    summary = tmp_path / "step-summary.md"
    env = {**os.environ, **settings(flow), "TUNER": tuner, "GITHUB_STEP_SUMMARY": str(summary),
           "BAT": str(Path(sys.executable).with_name("bat")), "BAT_DATA_DIR": str(tmp_path / "bat-data")}
    done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=work, env=env, capture_output=True, text=True,
                          timeout=300)
    return done.returncode, done.stdout + done.stderr, work


def test_the_recipe_is_a_workflow_with_the_steps_it_promises():
    flow = workflow()
    steps = flow["jobs"]["gate"]["steps"]
    assert any(s.get("uses", "").startswith("actions/upload-artifact") and s.get("if") == "always()" for s in steps)
    install = next(s for s in steps if s.get("name") == "Install BAT")["run"]
    assert "--break-system-packages" not in install and "--target .uv" in install
    run = gate_step(flow)["run"]
    assert "--baseline" in run and "GITHUB_STEP_SUMMARY" in run and "--json" in run
    assert "--isolate" in run and 'PYTHONPATH="$PWD"' in run


@pytest.mark.slow
def test_a_worse_tuner_fails_the_job_with_exit_3_and_says_where(repo: Path, tmp_path: Path):
    code, log, work = run_gate(repo, WORSE, tmp_path)
    assert code == EXIT_FOUND, log
    assert "::error::" in log and "regressed" in log
    doc = json.loads((work / "bat-report" / "bat-compare.json").read_text())
    (cell, *_) = doc["gate"]["regressed"]
    assert f"{cell['benchmark']}/{cell['gpu']}" in (tmp_path / "step-summary.md").read_text()
    assert (work / "bat-report" / "summary.md").exists() and (work / "bat-report" / "results.json").exists()


@pytest.mark.slow
def test_a_bad_baseline_is_exit_2_not_a_regression(repo: Path, tmp_path: Path):
    (repo / "ci" / "bat-baseline.json").rename(repo / "ci" / "kept.json")
    try:
        code, log, _ = run_gate(repo, RANDOM, tmp_path)
    finally:
        (repo / "ci" / "kept.json").rename(repo / "ci" / "bat-baseline.json")
    assert code == EXIT_USAGE and "could not run (exit 2)" in log


@pytest.mark.slow
def test_the_recipes_own_module_tuner_like_its_baseline_runs_isolated_through_pythonpath_and_passes(
        repo: Path, tmp_path: Path):
    # MyTuner is the baseline's random search under the recipe's own name: one gate run checks both
    code, log, work = run_gate(repo, "mine=my_tuner:MyTuner", tmp_path, files={"my_tuner.py": MY_TUNER})
    assert code == EXIT_OK, log
    assert "no cell regressed" in log
    assert (tmp_path / "step-summary.md").read_text().strip()
    doc = json.loads((work / "bat-report" / "bat-compare.json").read_text())
    assert doc["gate"]["passed"] and doc["exit_code"] == EXIT_OK and doc["executed"] > 0
    assert "warning" not in log.lower(), log  # every run ran: none died before its hello


@pytest.mark.slow
def test_a_tuner_that_cannot_be_imported_fails_the_gate_before_any_run(repo: Path, tmp_path: Path):
    code, log, work = run_gate(repo, "mine=my_tunr:MyTuner", tmp_path, files={"my_tuner.py": MY_TUNER})
    assert code == EXIT_USAGE and "could not run (exit 2)" in log
    assert "my_tunr" in log and "PYTHONPATH" in log and not (work / "bat-report").exists()
