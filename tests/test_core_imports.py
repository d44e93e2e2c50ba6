"""The core runs with numpy, pandas, pyarrow, typer and rich only (what the GPU machine has).

A subprocess blocks every optional library at import time and then uses the
core: spaces, datasets, replay, the reference tuner and the CLI.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

BLOCKED = ["scipy", "sklearn", "optuna", "smac", "kernel_tuner", "catboost", "networkx", "matplotlib",
           "dask", "distributed", "jsonschema", "hypothesis", "skops", "ConfigSpace"]

SCRIPT = textwrap.dedent(
    """
    import importlib.abc, sys
    BLOCKED = set(sys.argv[1].split(","))

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"{name} is blocked: the core must not need it")
            return None

    sys.meta_path.insert(0, Block())
    from bat.cli import main
    for args in (["list"], ["space"], ["run", "-t", "reference:random", "-b", "gemm", "-n", "10", "-o", sys.argv[2]]):
        code = main(args)
        assert code == 0, (args, code)
    # the GPU machine's paths import too
    import bat.run.recording.engine, bat.backends.live.backend, bat.backends.command
    print("CORE-OK")
    """
)


def test_core_needs_no_optional_library(tmp_path):
    proc = subprocess.run([sys.executable, "-c", SCRIPT, ",".join(BLOCKED), str(tmp_path / "t.parquet")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "CORE-OK" in proc.stdout
