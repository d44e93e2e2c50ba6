"""Fuzz every input format of issue 32 at scale (tests/fuzz_harness.py: the formats and the property).

Usage: python bench/fuzz_bench.py [--examples N] [--minutes M] [FORMAT ...]

Each format runs in a process of its own (so its peak memory is its own) for N examples or M minutes,
whichever comes first; the table printed at the end (examples run, failures, seconds, peak RSS in MB) goes
into docs/RELIABILITY.md. A failure is printed with its shrunk example: keep it in tests/fuzz_regressions.py.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one(name: str, examples: int, minutes: float) -> dict:
    sys.path.insert(0, str(ROOT / "tests"))
    from fuzz_harness import formats
    from hypothesis import HealthCheck, given, settings

    fmt = next(f for f in formats() if f.name == name)
    count, failures, deadline = [0], [], time.monotonic() + minutes * 60

    def chunk(n: int) -> None:
        @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(fmt.strategy())
        def check(example) -> None:
            count[0] += 1
            with tempfile.TemporaryDirectory() as folder:
                fmt.check(example, Path(folder))

        check()

    start = time.perf_counter()
    while count[0] < examples and time.monotonic() < deadline and len(failures) < 3:
        try:  # chunks of fresh random examples, so that the time limit is kept
            chunk(min(200, examples - count[0]))
        except Exception as exc:  # hypothesis re-raises the shrunk failure: kept as a finding
            failures.append(f"{type(exc).__name__}: {str(exc)[:600]}")
    return {"format": name, "examples": count[0], "failures": failures,
            "seconds": round(time.perf_counter() - start, 1),
            "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("formats", nargs="*")
    parser.add_argument("--examples", type=int, default=100_000)
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.examples, args.minutes)))
        return
    sys.path.insert(0, str(ROOT / "tests"))
    from fuzz_harness import formats

    names = args.formats or [f.name for f in formats()]
    rows = []
    for name in names:
        done = subprocess.run([sys.executable, __file__, "--one", name, "--examples", str(args.examples),
                               "--minutes", str(args.minutes)], capture_output=True, text=True, cwd=ROOT)
        lines = done.stdout.strip().splitlines()
        row = json.loads(lines[-1]) if lines else {"format": name, "examples": 0, "failures": [done.stderr[-600:]],
                                                   "seconds": 0, "peak_mb": 0}
        rows.append(row)
        print(f"{row['format']:18} {row['examples']:>8} examples {len(row['failures'])} failures "
              f"{row['seconds']:>7} s peak {row['peak_mb']} MB", flush=True)
        for failure in row["failures"]:
            print("   ", failure.replace("\n", "\n    "), flush=True)


if __name__ == "__main__":
    main()
