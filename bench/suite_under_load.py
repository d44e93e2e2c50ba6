"""The README's test command, N times in a row, with every core kept busy by another process (or idle).

The command is read from README.md (the line of step 2 with ``pytest -n
auto``): what comes before its ``&&`` is set-up, run once first and not
timed; what comes after it is the test command, run ``--runs`` times in a
row from the repository root. Without ``--idle`` a stressor runs the whole
time: one busy-loop process per CPU (``os.cpu_count()``), at normal
priority, started before the first run and killed after the last (they die
with this script too: ``bat.core.lifetime``, so a ``kill -9`` of it leaves
none behind). Arguments after ``--`` are added to the test command (a pytest
selection, to try this script on a few tests; the figures in
bench/RESULTS.md are of the whole suite, no selection).

Per run: wall seconds, exit status, the counts of pytest's last line
(passed, failed, errors, skipped) and the load average before and after,
printed as a Markdown table, and the last lines of a failing run's output.

Usage: ``python bench/suite_under_load.py [--runs 3] [--idle] [-- tests/test_x.py -q]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COUNTS = ("passed", "failed", "errors", "skipped")


def readme_command() -> tuple[str, str]:
    """(set-up, test command) of the README's step 2."""
    for line in (ROOT / "README.md").read_text().splitlines():
        if "pytest -n auto" in line and not line.lstrip().startswith("#"):
            setup, _, test = line.partition("&&")
            if not test:
                return "", setup.strip()
            return setup.strip(), test.strip()
    raise SystemExit("README.md: no line with 'pytest -n auto'")


def start_stressor(n: int) -> list[subprocess.Popen]:
    from bat.core.lifetime import kill_me_with_parent

    return [subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=kill_me_with_parent,
                             stdin=subprocess.DEVNULL) for _ in range(n)]


def stop_stressor(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def counts(output: str) -> dict[str, int]:
    """The counts of pytest's summary line (``3 passed, 1 failed, 2 skipped in 4.5s``)."""
    last = next((line for line in reversed(output.splitlines()) if re.search(r"\b(passed|failed|error)", line)), "")
    found = {m.group(2): int(m.group(1)) for m in re.finditer(r"(\d+) (passed|failed|errors?|skipped)", last)}
    if "error" in found:
        found["errors"] = found.pop("error")
    return {k: found.get(k, 0) for k in COUNTS}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--idle", action="store_true", help="no stressor")
    ap.add_argument("selection", nargs="*", help="after --: added to the test command")
    args = ap.parse_args()
    setup, test = readme_command()
    command = test + "".join(" " + shlex.quote(a) for a in args.selection)
    if setup:
        subprocess.run(setup, shell=True, cwd=ROOT, check=True)
    stress = 0 if args.idle else os.cpu_count() or 1
    print(f"{datetime.now():%Y-%m-%d %H:%M}, {platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}; {'idle (no stressor)' if args.idle else f'{stress} busy-loop processes'}; "
          f"`{command}`\n", flush=True)
    rows, tails = [], []
    procs = start_stressor(stress) if stress else []
    try:
        for i in range(1, args.runs + 1):
            load = os.getloadavg()
            start = time.perf_counter()
            done = subprocess.run(command, shell=True, cwd=ROOT, capture_output=True, text=True)
            wall = time.perf_counter() - start
            c = counts(done.stdout)
            rows.append(f"| {i} | {wall:.0f} | {done.returncode} | {c['passed']} | {c['failed']} | {c['errors']} "
                        f"| {c['skipped']} | {load[0]:.2f} | {os.getloadavg()[0]:.2f} |")
            print(rows[-1], flush=True)
            if done.returncode != 0:
                tails.append(f"run {i}:\n" + "\n".join((done.stdout + done.stderr).splitlines()[-40:]))
    finally:
        stop_stressor(procs)
    print("\n| run | wall s | exit | passed | failed | errors | skipped | load before | load after |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    for tail in tails:
        print("\n" + tail)


if __name__ == "__main__":
    main()
