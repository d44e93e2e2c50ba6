"""A wheel install (not editable) finds the shipped data through the package and never writes into itself."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("bat", "results", "benchmarks", "analysis", "tuner_adapters", "pyproject.toml", "README.md")

CHECK = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from bat.core.benchmark import load_benchmark
    from bat.cli import main
    from bat.registry import dataset_entries
    site = Path(sys.argv[1]).resolve()
    entries = dataset_entries()
    assert len(entries) == 13 and all(site in e.path.resolve().parents for e in entries), entries
    assert site in load_benchmark("gemm").path.resolve().parents
    cache = sys.argv[2]
    assert main(["import", cache, "--out", str(site / "results" / "x.parquet")]) == 2
    assert main(["import", cache]) == 0
    assert main(["run", "-t", "reference:random", "-b", "pnpoly", "-n", "3"]) == 0
    print(json.dumps(sorted(str(p) for p in Path("bat-data").rglob("*.parquet"))))
""")


def test_a_wheel_install_finds_its_datasets_and_stays_read_only(tmp_path):
    pytest.importorskip("pip")
    src = tmp_path / "src"
    for name in SOURCES:
        origin = ROOT / name
        if origin.is_dir():
            shutil.copytree(origin, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(origin, src / name)
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(wheels), str(src)], check=True, capture_output=True)
    site = tmp_path / "site-packages"
    (wheel,) = wheels.glob("bat-*.whl")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, capture_output=True)
    before = sorted(p for p in site.rglob("*") if "__pycache__" not in p.parts)
    from own_data_files import kt_cache_new, toy, write

    cache = write(kt_cache_new(toy()), tmp_path / "toy_RTX_3090.json")
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("BAT_DATA_DIR", "BAT_RESULTS")}
    env["PYTHONPATH"] = str(site)
    proc = subprocess.run([sys.executable, "-c", CHECK, str(site), str(cache)], cwd=work, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "inside the installed package" in proc.stderr
    written = proc.stdout.strip().splitlines()[-1]
    assert "bat-data/datasets/toy_RTX_3090.parquet" in written and "bat-data/runs/" in written
    assert sorted(p for p in site.rglob("*") if "__pycache__" not in p.parts) == before
