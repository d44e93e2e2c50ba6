"""Fuzz every input format of issue 32 at scale (tests/fuzz_harness.py: the formats and the property).

Usage: python bench/fuzz_bench.py [--examples N] [--minutes M] [--minutes-for FORMAT=M] [--jobs J]
                                  [--cross-check-every K] [--json FILE] [FORMAT ...]

Each format runs in a process of its own (so its peak memory is its own; ``--jobs`` of them at once, at the
lowest priority) for N examples or M minutes, whichever comes first. The property is checked in process
(``bat.cli.main`` with captured streams: a command line costs milliseconds, not the second a Python process
takes to start); every K-th command line also runs as a process of its own and must give the same exit status
and error line. Every 30 s a process writes what it has done so far beside ``--json``; one that outlives its
time by two minutes is killed, reported with its last figures and its exit status. The table
printed at the end (examples, failures, examples per second, cross-checks, peak RSS) goes into
docs/RELIABILITY.md; a failure is printed with its shrunk example: keep it in tests/test_fuzz_regressions.py.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one(name: str, examples: int, minutes: float, cross_check_every: int, progress: Path | None = None) -> dict:
    sys.path.insert(0, str(ROOT / "tests"))
    import fuzz_harness
    from hypothesis import HealthCheck, given, settings

    fuzz_harness.CROSS_CHECK_EVERY[0] = cross_check_every
    fmt = next(f for f in fuzz_harness.formats() if f.name == name)
    count, failures, deadline = [0], [], time.monotonic() + minutes * 60
    start, written = time.perf_counter(), [time.monotonic()]

    def row() -> dict:
        seconds = time.perf_counter() - start
        return {"format": name, "examples": count[0], "failures": failures, "seconds": round(seconds, 1),
                "per_second": round(count[0] / seconds, 1) if seconds else 0.0,
                "command_lines": fuzz_harness.COUNTS[0], "cross_checked": fuzz_harness.COUNTS[1],
                "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}

    def chunk(n: int) -> None:
        @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(fmt.strategy())
        def check(example) -> None:
            if time.monotonic() >= deadline:  # past the time limit: the rest of the chunk is drawn, not run
                return
            count[0] += 1
            with tempfile.TemporaryDirectory() as folder:
                fmt.check(example, Path(folder))
            if progress is not None and time.monotonic() - written[0] > 30:  # so a killed run still reports
                written[0] = time.monotonic()
                progress.write_text(json.dumps(row()))

        check()

    while count[0] < examples and time.monotonic() < deadline and len(failures) < 3:
        try:  # chunks of fresh random examples
            chunk(min(200, examples - count[0]))
        except (Exception, fuzz_harness.Hang) as exc:  # hypothesis re-raises the shrunk failure: a finding
            notes = " ".join(getattr(exc, "__notes__", []))  # hypothesis's "Falsifying example: ..."
            failures.append(f"{type(exc).__name__}: {str(exc)[:600]} {notes[:20000]}")
    return row()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("formats", nargs="*")
    parser.add_argument("--examples", type=int, default=100_000)
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--minutes-for", action="append", default=[], metavar="FORMAT=M")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--cross-check-every", type=int, default=1000)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--progress", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.examples, args.minutes, args.cross_check_every, args.progress)))
        return
    sys.path.insert(0, str(ROOT / "tests"))
    from fuzz_harness import formats

    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
    minutes = {name: args.minutes for name in args.formats or [f.name for f in formats()]}
    for item in args.minutes_for:
        name, _, value = item.partition("=")
        minutes[name] = float(value)
    waiting, running, rows = list(minutes), {}, []
    while waiting or running:
        while waiting and len(running) < args.jobs:
            name = waiting.pop(0)
            command = [sys.executable, __file__, "--one", name, "--examples", str(args.examples), "--minutes",
                       str(minutes[name]), "--cross-check-every", str(args.cross_check_every)]
            if args.json:
                command += ["--progress", str(args.json.with_name(f"{args.json.stem}.{name}.progress.json"))]
            running[name] = (subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                              cwd=ROOT, preexec_fn=lambda: os.nice(19)),
                             time.monotonic() + minutes[name] * 60 + 120)
        time.sleep(1)
        for name, (process, kill_at) in list(running.items()):
            if process.poll() is None and time.monotonic() < kill_at:
                continue
            if process.poll() is None:
                process.kill()
            stdout, stderr = process.communicate()
            del running[name]
            lines = stdout.strip().splitlines()
            if lines and process.returncode == 0:
                row = json.loads(lines[-1])
            else:  # killed, or it died: what it last reported, and how it ended
                last = args.json.with_name(f"{args.json.stem}.{name}.progress.json") if args.json else None
                row = json.loads(last.read_text()) if last is not None and last.exists() else {
                    "format": name, "examples": 0, "failures": [], "seconds": 0, "per_second": 0,
                    "command_lines": 0, "cross_checked": 0, "peak_mb": 0}
                row["failures"] = [*row["failures"], f"exit {process.returncode}: {stderr[-600:]}"]
            rows.append(row)
            print(f"{row['format']:18} {row['examples']:>8} examples {len(row['failures'])} failures "
                  f"{row['seconds']:>7} s {row['per_second']:>7}/s {row['cross_checked']:>4} cross-checked "
                  f"peak {row['peak_mb']} MB", flush=True)
            for failure in row["failures"]:
                print("   ", failure.replace("\n", "\n    "), flush=True)
            if args.json:
                args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
