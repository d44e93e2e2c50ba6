"""kill -9 experiments: `bat compare -j 1` and `-j 2`, `bat record` and `bat run` (command backend).

Run: .venv/bin/python bench/kill9_bench.py [--trials 10] [--grace 2]
Each trial starts the command in its own session, waits until a random
number of its units are finished (runs for compare, journal lines for
record and run), sends SIGKILL to the `bat` process alone (as `kill -9 PID` would),
then counts, after ``--grace`` seconds:

- processes left: processes of its session still alive (pool workers, the
  guardian, Dask's or multiprocessing's helpers) plus processes tagged with
  its command backend's scratch folder (command steps run in sessions of
  their own); and scratch folders left in its private temporary folder;
- then it runs the same command again to completion (compare: a rerun;
  record and run: ``--resume``) and compares the result with an uninterrupted
  reference run made first: rows lost (in the reference, missing from the
  result), rows duplicated (present twice, or a unit finished before the kill
  and done again), rows changed (a finished unit whose values differ).

Prints one Markdown table row per experiment (sums over the trials).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BAT = [str(Path(sys.executable).with_name("bat"))]
COMPARE = ["compare", "-t", "optuna,optuna:random", "-b", "pnpoly", "--gpus", "RTX_3090", "--budgets", "15,30",
           "--repeats", "8", "--no-plots"]
RUN = ["run", "-b", "matmul_c", "--backend", "command", "-t", "reference:random", "-n", "16", "-s", "3"]
RECORD = ["record", "-b", "matmul_c", "--sample", "16", "--size", "small", "--workers", "1"]
PARAMETERS = ["TILE_I", "TILE_J", "TILE_K", "UNROLL", "OPT"]


def bat(args: list[str], env: dict[str, str], *, wait: bool = True) -> subprocess.Popen:
    proc = subprocess.Popen([*BAT, *args], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    if wait:
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"bat {' '.join(args)} exited {proc.returncode}: {err[-2000:]}")
    return proc


def session_members(sid: int) -> list[int]:
    """Live (not zombie) processes of session ``sid``."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[3]) == sid and fields[0] != "Z":
            out.append(int(entry.name))
    return out


def left_behind(proc: subprocess.Popen, tmp: Path, grace: float) -> tuple[int, int]:
    """(processes, scratch folders) still there ``grace`` seconds after the kill."""
    from bat.core.lifetime import tagged_pids

    time.sleep(grace)
    tags = [p.name + "/" for p in tmp.glob("bat-command-*")]
    pids = set(session_members(proc.pid)) | {p for t in tags for p in tagged_pids(t)}
    return len(pids), len(list(tmp.glob("bat-command-*")))


def kill_when(proc: subprocess.Popen, done: callable, target: int) -> int:
    """SIGKILL ``proc`` once ``done()`` reaches ``target``; return ``done()`` at the kill."""
    while proc.poll() is None and done() < target:
        time.sleep(0.02)
    n = done()
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return n


# -- compare ---------------------------------------------------------------------------------
def observations(out: Path) -> Counter:
    doc = json.loads((out / "results.json").read_text())
    return Counter((o["run_id"], o["budget"], o["perf"]) for o in doc["observations"])


def finished_runs(out: Path) -> dict[str, bytes]:
    """The campaign's committed runs (run id -> stored metadata and trace), read from its SQLite store."""
    path = out / "runs.sqlite"
    if not path.exists():
        return {}
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)) as db:
            return {rid: meta.encode() + trace for rid, meta, trace in db.execute("SELECT * FROM runs")}
    except sqlite3.OperationalError:  # created but not yet holding its table
        return {}


def compare_trial(workers: int, reference: Counter, total: int, work: Path, rng: random.Random,
                  grace: float) -> dict[str, int]:
    out, tmp = work / "out", work / "tmp"
    tmp.mkdir(parents=True)
    env = {**os.environ, "TMPDIR": str(tmp)}
    args = [*COMPARE, "-j", str(workers), "-o", str(out)]
    proc = bat(args, env, wait=False)
    kill_when(proc, lambda: len(finished_runs(out)), rng.randint(1, total - 1))
    procs, folders = left_behind(proc, tmp, grace)
    before = finished_runs(out)
    result = subprocess.run([*BAT, *args], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    executed = int(result.stdout.split(" runs executed")[0].split()[-1])
    after = finished_runs(out)
    got = observations(out)
    changed = sum(after.get(k) != v for k, v in before.items())
    return {"lost": sum((reference - got).values()), "duplicated": sum((got - reference).values())
            + max(0, executed - (total - len(before))), "changed": changed, "processes": procs,
            "folders": folders, "done_at_kill": len(before)}


# -- record ----------------------------------------------------------------------------------
def journal_lines(path: Path) -> int:
    try:
        return max(0, path.read_bytes().count(b"\n") - 1)
    except OSError:
        return 0


def dataset_rows(path: Path) -> list[tuple]:
    from bat.core.dataset import Dataset

    frame = Dataset.load(path).frame
    return [tuple(r) for r in frame[PARAMETERS].itertuples(index=False)]


def journal_records(path: Path) -> dict[str, str]:
    lines = path.read_text().splitlines()[1:]
    recs = [json.loads(line) for line in lines if line.strip()]
    return {json.dumps(r["config"], sort_keys=True): json.dumps(r, sort_keys=True) for r in recs}


def record_trial(reference: list[tuple], total: int, work: Path, rng: random.Random,
                 grace: float) -> dict[str, int]:
    out, tmp = work / "rec.parquet", work / "tmp"
    tmp.mkdir(parents=True)
    env = {**os.environ, "TMPDIR": str(tmp)}
    journal = out.with_name(out.name + ".journal.jsonl")
    proc = bat([*RECORD, "-o", str(out)], env, wait=False)
    kill_when(proc, lambda: journal_lines(journal), rng.randint(1, total - 1))
    procs, folders = left_behind(proc, tmp, grace)
    before = journal_records(journal) if journal.exists() else {}
    copy = work / "journal-before.jsonl"
    if journal.exists():
        shutil.copy(journal, copy)
    bat([*RECORD, "-o", str(out), "--resume"], env)
    rows = dataset_rows(out)
    counts, ref = Counter(rows), Counter(reference)
    from bat.core.dataset import Dataset

    frame = Dataset.load(out).frame
    final = {json.dumps({k: r[k] for k in PARAMETERS}, sort_keys=True): r
             for r in frame[[*PARAMETERS, "times_ms"]].to_dict("records")}
    changed = 0
    for key, line in before.items():
        rec = json.loads(line)
        mine = final.get(key)
        if mine is None or [float(x) for x in mine["times_ms"]] != [float(x) for x in rec.get("times_ms", [])]:
            changed += 1
    return {"lost": sum((ref - counts).values()), "duplicated": sum((counts - ref).values()),
            "changed": changed, "processes": procs, "folders": folders, "done_at_kill": len(before)}


# -- run -------------------------------------------------------------------------------------
def evaluated_rows(trace: Path) -> list[tuple]:
    from bat.core.trace import read_trace

    frame, _ = read_trace(trace)
    frame = frame[frame["kind"] == "evaluated"]
    return [tuple(r) for r in frame[[*PARAMETERS, "objective_ms"]].itertuples(index=False)]


def _same(got: object, kept: float | None) -> bool:
    """A trace's objective against the journal's: NaN in the trace is None in the journal."""
    if kept is None:
        return isinstance(got, float) and got != got
    return got == kept


def run_trial(reference: list[tuple], total: int, work: Path, rng: random.Random,
              grace: float) -> dict[str, int]:
    out, tmp = work / "run.parquet", work / "tmp"
    tmp.mkdir(parents=True)
    env = {**os.environ, "TMPDIR": str(tmp)}

    def journals() -> list[Path]:
        return list(work.glob(f"{out.name}.*.journal.jsonl"))

    proc = bat([*RUN, "-o", str(out)], env, wait=False)
    kill_when(proc, lambda: sum(journal_lines(p) for p in journals()), rng.randint(1, total - 1))
    procs, folders = left_behind(proc, tmp, grace)
    kept = next(iter(journals()), None)
    before = journal_records(kept) if kept else {}
    result = subprocess.run([*BAT, *RUN, "-o", str(out), "--resume"], cwd=ROOT, env=env, capture_output=True,
                            text=True, check=True)
    said = " ".join(result.stdout.split())
    measured = int(said.split(" measured now")[0].split()[-1]) if " measured now" in said else total
    rows = evaluated_rows(out)
    configs, ref = Counter(r[:-1] for r in rows), Counter(r[:-1] for r in reference)
    final = {json.dumps(dict(zip(PARAMETERS, r[:-1], strict=True)), sort_keys=True): r[-1] for r in rows}
    changed = sum(not _same(final.get(key, "lost"), json.loads(line)["objective_ms"]) for key, line in before.items())
    return {"lost": sum((ref - configs).values()),
            "duplicated": sum((configs - ref).values()) + max(0, measured - (total - len(before))),
            "changed": changed, "processes": procs, "folders": folders, "done_at_kill": len(before)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--grace", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    base = Path(tempfile.mkdtemp(prefix="bat-kill9-"))
    env = {**os.environ, "TMPDIR": str(base)}
    ref_out = base / "reference"
    bat([*COMPARE, "-o", str(ref_out)], env)
    reference, total = observations(ref_out), len(finished_runs(ref_out))
    rec_ref = base / "reference.parquet"
    bat([*RECORD, "-o", str(rec_ref)], env)
    rec_rows = dataset_rows(rec_ref)
    run_ref = base / "run-reference.parquet"
    bat([*RUN, "-o", str(run_ref)], env)
    run_rows = evaluated_rows(run_ref)
    rows = []
    for name, trial in (("bat compare -j 1", lambda w: compare_trial(1, reference, total, w, rng, args.grace)),
                        ("bat compare -j 2", lambda w: compare_trial(2, reference, total, w, rng, args.grace)),
                        ("bat record (command backend)",
                         lambda w: record_trial(rec_rows, len(rec_rows), w, rng, args.grace)),
                        ("bat run (command backend)",
                         lambda w: run_trial(run_rows, len(run_rows), w, rng, args.grace))):
        sums: Counter = Counter()
        kills = []
        for i in range(args.trials):
            res = trial(base / f"{name.split()[1]}{name[-1]}-{i}")
            kills.append(res.pop("done_at_kill"))
            sums.update(res)
            print(f"{name} trial {i}: {res}", file=sys.stderr, flush=True)
        rows.append(f"| {name} | {args.trials} | {min(kills)}-{max(kills)} | {sums['lost']} | {sums['duplicated']} "
                    f"| {sums['changed']} | {sums['processes']} | {sums['folders']} |")
    shutil.rmtree(base, ignore_errors=True)
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"{datetime.date.today()}; `bench/kill9_bench.py --trials {args.trials} --grace {args.grace}`\n")
    print(f"| experiment | trials | units done at the kill | rows lost | rows duplicated | rows changed | "
          f"processes left after {args.grace:g} s | scratch folders left |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print(f"\ncompare: {total} runs per campaign ({' '.join(COMPARE[1:])}); record: {len(rec_rows)} "
          f"configurations ({' '.join(RECORD[1:])}); run: {len(run_rows)} evaluations "
          f"({' '.join(RUN[1:])}), rerun with --resume")


if __name__ == "__main__":
    main()
