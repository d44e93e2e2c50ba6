"""CPU of one in-process ``bat import`` as the fuzz and type-walk tests run it, split by the product's phases.

The file imported is the fuzzers' base (tests/fuzz_harness.py: eight rows of the pnpoly dataset as T4 or as a
Kernel Tuner cache), into a fresh ``-o`` file each time, in one process, as ``run_cli`` does. Printed: the CPU
milliseconds per command, the phases' (each timed where it is called; they nest: ``_read`` holds ``read_t4``
which holds ``make_frame``), and a ``Dataset.load`` of the result (the tests read each back).

A peer is measured by running this file with the other checkout's Python from that checkout, so that ``bat``
is its own (the bases come from this file's repository, the same in both): ``cd ../main && .venv/bin/python
../cliperf/bench/import_bench.py t4``. Run the two alternately, a few times each: the machine is shared.

Usage: ``python bench/import_bench.py {t4,kerneltuner} [--commands 150]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

#: (module, function) pairs timed, each under the function's name
PHASES = [("bat.formats.importing", "import_file"), ("bat.formats.importing", "_read"),
          ("bat.formats.t4", "read_t4"), ("bat.formats.t4", "make_frame"), ("bat.formats.kerneltuner", "make_frame"),
          ("bat.formats.importing", "refuse_or_quarantine"), ("bat.formats.importing", "load_benchmark"),
          ("bat.data.checks", "registry_peers"), ("bat.data.checks", "check_dataset"), ("bat.cli.data_cmd", "_save")]


def _timed(spent: Counter[str], name: str, call: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return call(*args, **kwargs)
        finally:
            spent[name] += time.process_time() - start
    return timed


def main() -> None:
    import importlib

    from fuzz_harness import cache_base, t4_base

    from bat.cli import main as bat
    from bat.core.dataset import Dataset

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=["t4", "kerneltuner"])
    ap.add_argument("--commands", type=int, default=150)
    args = ap.parse_args()
    spent: Counter[str] = Counter()
    for module, name in PHASES:
        mod = importlib.import_module(module)
        setattr(mod, name, _timed(spent, name, getattr(mod, name)))
    data = json.dumps(t4_base() if args.kind == "t4" else cache_base()).encode()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.environ["BAT_DATA_DIR"] = str(folder / "bat-data")
        os.chdir(folder)
        (folder / "in.json").write_bytes(data)

        def command(out: str) -> None:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
                code = bat(["import", "in.json", "-b", "pnpoly", "-o", out])
            assert code == 0, err.getvalue()

        for i in range(5):  # imports and first-use caches out of the figure
            command(f"warm{i}.parquet")
        spent.clear()
        start = time.process_time()
        for i in range(args.commands):
            command(f"d{i}.parquet")
        total = time.process_time() - start
        start = time.process_time()
        for i in range(args.commands):
            Dataset.load(folder / f"d{i}.parquet")
        load = time.process_time() - start
    per = 1e3 / args.commands
    print(f"{args.kind}: {total * per:.2f} CPU ms per bat import; Dataset.load of its result {load * per:.2f} ms "
          f"({args.commands} commands, load average {os.getloadavg()[0]:.2f})")
    for name, seconds in spent.most_common():
        print(f"  {name:22s} {seconds * per:6.2f} ms")


if __name__ == "__main__":
    main()
