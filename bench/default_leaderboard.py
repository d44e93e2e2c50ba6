"""The default leaderboard: every shipped tuner on every shipped dataset, ranked by ``bat leaderboard``.

One command rebuilds it (run from the repository root; about an hour on the
two-core development machine, see ``docs/leaderboard.md``)::

    nice -n 15 .venv/bin/python bench/default_leaderboard.py --work lb-work

Steps (each a ``bat`` command, printed before it runs; finished runs are
reused from ``WORK``, so an interrupted build resumes):

1. ``bat compare``: the tuners of the shipped families (reference, Optuna's
   samplers, SMAC's facades, Kernel Tuner's strategies; read from the tuner
   catalogue, not a hand-kept list) on every shipped dataset (``--benchmarks
   all --gpus all``), ``--budgets`` and ``--repeats`` as given (default one
   budget of 25 evaluations, 2 repeats), replayed, ``--workers`` processes.
   Left out, each with its reason in the output: oracles, tuners whose
   library is missing here (``optuna:gp`` without PyTorch), the
   profile-guided tuners (they need recorded performance counters, which one
   shipped dataset has) and the transfer tuners (step 2).
2. ``bat compare --study transfer``: the transfer tuners and random search on
   the transfer study, same budget and repeats.
3. ``bat leaderboard`` of steps 1 and 2 into ``WORK/site`` (signed with
   ``WORK/leaderboard.pem``; the transfer study on its own pages,
   ``transfer/``) and ``bat leaderboard --verify`` of it.
4. ``--standings FILE`` (default ``results/default-leaderboard/standings.json``): the
   overall ranking, the transfer study's scores per tuner, the commands, the
   wall time of each step, the date, the machine and its load average, and
   BAT's version.
5. With Chromium on PATH, ``--screenshot FILE`` (default
   ``docs/figures/leaderboard.png``): the ranking page drawn by headless
   Chromium.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bat.tuner_adapters.catalogue import KERNEL_TUNER, OPTUNA, REFERENCE, SMAC, TRANSFER

#: catalogue families run in the campaign (step 1), by registry prefix
FAMILIES = {"reference": REFERENCE, "optuna": OPTUNA, "smac": SMAC, "kernel_tuner": KERNEL_TUNER}
#: the Python module each tuner's optional library is imported as
_MODULES = {"scikit-learn": "sklearn", "kernel_tuner": "kernel_tuner", "optuna": "optuna", "smac": "smac"}


def campaign_tuners(skip: list[str]) -> tuple[list[str], dict[str, str]]:
    """The tuners of step 1, and those left out with why (``skip``: left out by the command)."""
    chosen, left = [], {}
    for family, entries in FAMILIES.items():
        for key, entry in entries.items():
            name = f"{family}:{key}" if key else family
            if name in skip:
                left[name] = "left out by --skip (docs/leaderboard.md, the default leaderboard, says why)"
            elif entry.oracle:
                left[name] = "an oracle (reads the target's measurements)"
            elif "PyTorch" in entry.summary and importlib.util.find_spec("torch") is None:
                left[name] = "needs PyTorch, not installed (the gp extra)"
            elif entry.requires and importlib.util.find_spec(_MODULES.get(entry.requires, entry.requires)) is None:
                left[name] = f"needs {entry.requires}, not installed"
            else:
                chosen.append(name)
    left["profile (all variants)"] = "needs recorded performance counters (one shipped dataset has them)"
    return chosen, left


def _bat(*args: str) -> float:
    """Run one ``bat`` command (printed first), failing on a non-zero exit; its wall seconds."""
    command = [str(Path(sys.executable).with_name("bat")), *args]
    print("$ bat " + " ".join(args), flush=True)
    start = time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - start


def site_step(work: Path, site: Path) -> list[str]:
    """The ``bat leaderboard`` command of step 3: the campaign and the transfer study of ``work`` into ``site``."""
    return ["leaderboard", str(work / "campaign"), str(work / "transfer"), "--out", str(site), "--key",
            str(work / "leaderboard.pem")]


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _overall(site: Path) -> list[dict[str, Any]]:
    """The site's overall ranking, as its standings give it."""
    standings = json.loads((site / "standings.json").read_text(encoding="utf-8"))
    return [{"rank": r["rank"], "tuner": r["tuner"], "rank_time": r["rank_time"],
             **{axis: {k: r[axis][k] for k in ("score", "ci_low", "ci_high", "targets")}
                for axis in ("evaluations", "time")}} for r in standings["overall"]]


def _transfer(folder: Path) -> dict[str, Any]:
    """The transfer study's score per tuner and axis over its (split, target) pairs, from its results.json."""
    doc = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    return {"splits": len(doc["study"]["splits"]), "summary": doc.get("summary", {})}


def screenshot(page: Path, png: Path) -> bool:
    """``page`` drawn by headless Chromium into ``png`` (1280 x 1600); False without Chromium."""
    chromium = shutil.which("chromium")
    if chromium is None:
        return False
    png.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=1280,1600", "--virtual-time-budget=10000", f"--screenshot={png.resolve()}",
                    page.resolve().as_uri()], check=True, capture_output=True, timeout=300)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=Path("lb-work"), help="work folder (runs are reused)")
    parser.add_argument("--budgets", default="25")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--skip", default="", help="comma-separated tuners to leave out of step 1")
    parser.add_argument("--standings", type=Path, default=Path("results/default-leaderboard/standings.json"))
    parser.add_argument("--screenshot", type=Path, default=Path("docs/figures/leaderboard.png"))
    args = parser.parse_args()
    import bat

    tuners, left = campaign_tuners([name for name in args.skip.split(",") if name])
    for name, why in left.items():
        print(f"left out: {name}: {why}", flush=True)
    load_before = _load()
    started = datetime.datetime.now(datetime.UTC)
    common = ["--budgets", args.budgets, "--repeats", str(args.repeats), "--workers", str(args.workers),
              "--no-plots"]
    steps = {
        "campaign": ["compare", "--tuners", ",".join(tuners), "--benchmarks", "all", "--gpus", "all", *common,
                     "--out", str(args.work / "campaign")],
        "transfer": ["compare", "--study", "transfer", "--tuners",
                     ",".join(["reference:random", *(f"transfer:{k}" for k in TRANSFER)]), *common,
                     "--out", str(args.work / "transfer")],
    }
    wall = {name: round(_bat(*cmd), 1) for name, cmd in steps.items()}
    site = args.work / "site"
    if site.exists():
        shutil.rmtree(site)
    steps["site"] = site_step(args.work, site)
    wall["site"] = round(_bat(*steps["site"]), 1)
    steps["verify"] = ["leaderboard", "--verify", str(site)]
    wall["verify"] = round(_bat(*steps["verify"]), 1)
    doc = {
        "what": "the default leaderboard (bench/default_leaderboard.py): every shipped tuner on every shipped "
                "dataset, replayed; methodology score on evaluations and simulated time, 95 % intervals",
        "command": "nice -n 15 .venv/bin/python " + " ".join(["bench/default_leaderboard.py", *sys.argv[1:]]),
        "steps": {name: "bat " + " ".join(cmd) for name, cmd in steps.items()},
        "wall_s": wall,
        "started_utc": started.isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "processor": platform.processor(),
                    "load_average_before": load_before, "load_average_after": _load()},
        "bat_version": bat.__version__,
        "budgets": [int(b) for b in args.budgets.split(",")],
        "repeats": args.repeats,
        "left_out": left,
        "overall": _overall(site),
        "transfer_study": _transfer(args.work / "transfer"),
    }
    args.standings.parent.mkdir(parents=True, exist_ok=True)
    args.standings.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"standings: {args.standings}", flush=True)
    if screenshot(site / "index.html", args.screenshot):
        print(f"screenshot: {args.screenshot}", flush=True)


if __name__ == "__main__":
    main()
