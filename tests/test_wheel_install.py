"""The built wheel in a fresh virtual environment outside the checkout: one namespace, read-only data, working commands.

The wheel is built from a copy of the repository (links followed, as a source
distribution would), installed with its dependencies (the lock file's versions,
from uv's cache) into a new venv in a temporary folder, and run
from there: ``bat run``, ``bat verify --first`` on a benchmark, ``bat analyze``
on a dataset, an import into the data folder. site-packages then holds the
project's one namespace ``bat`` and nothing generic at top level, and nothing
is ever written into the installed package.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("bat", "results", "benchmarks", "analysis", "tuner_adapters", "pyproject.toml", "README.md", "uv.lock")
#: what the project's wheel may put at the top of site-packages
OURS = {"bat", "bat_autotune-0.1.0.dist-info"}

CHECK = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from bat.core.benchmark import load_benchmark
    from bat.cli import main
    from bat.registry import dataset_entries
    site = Path(sys.argv[1]).resolve()
    entries = dataset_entries()
    assert len(entries) >= 13 and all(site in e.path.resolve().parents for e in entries), entries
    assert site in load_benchmark("gemm").path.resolve().parents
    cache = sys.argv[2]
    assert main(["import", cache, "--out", str(site / "bat" / "results" / "x.parquet")]) == 2
    assert main(["import", cache]) == 0
    print(json.dumps(sorted(str(p) for p in Path("bat-data").rglob("*.parquet"))))
""")

pytestmark = pytest.mark.slow


def _uv() -> str:
    uv = os.environ.get("UV") or shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not on PATH (the README's commands run the tests through `uv run`, which sets UV)")
    return uv


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> tuple[Path, Path]:
    """(the venv's python, its site-packages) with the wheel and the core + analysis dependencies installed."""
    uv, tmp = _uv(), tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    for name in SOURCES:
        origin = ROOT / name
        if origin.is_dir():
            shutil.copytree(origin, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(origin, src / name)
    wheels = tmp / "wheels"
    subprocess.run([uv, "build", "--offline", "--wheel", "--out-dir", str(wheels), str(src)], check=True,
                   capture_output=True, timeout=600)
    (wheel,) = wheels.glob("bat_autotune-*.whl")
    requirements = tmp / "requirements.txt"
    subprocess.run([uv, "export", "--frozen", "--offline", "--no-hashes", "--no-emit-project", "--no-default-groups",
                    "--group", "analysis", "--output-file", str(requirements)], cwd=src, check=True,
                   capture_output=True, timeout=300)
    env = tmp / "venv"
    subprocess.run([uv, "venv", "--offline", "--python", sys.executable, str(env)], check=True, capture_output=True,
                   timeout=300)
    python = env / "bin" / "python"
    subprocess.run([uv, "pip", "install", "--python", str(python), "-r", str(requirements), str(wheel)],
                   check=True, capture_output=True, timeout=600)
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    return python, site


def _run(python: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("BAT_DATA_DIR", "BAT_RESULTS", "PYTHONPATH", "UV")}
    env["COLUMNS"] = "200"
    return subprocess.run([python, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_one_namespace_and_py_typed(venv) -> None:
    _, site = venv
    ours = {p.name for p in site.iterdir() if _from_wheel(site, p.name)}
    assert ours == OURS
    assert (site / "bat" / "py.typed").is_file()
    for generic in ("analysis", "benchmarks", "results", "tuner_adapters"):
        assert not (site / generic).exists() and (site / "bat" / generic / "__init__.py").is_file()


def _from_wheel(site: Path, name: str) -> bool:
    """Whether top-level entry ``name`` of site-packages was installed by our wheel (its RECORD says)."""
    (record,) = site.glob("bat_autotune-*.dist-info/RECORD")
    return any(line.split("/")[0].split(",")[0] == name for line in record.read_text().splitlines())


def test_commands_run_from_the_installed_wheel(venv, tmp_path) -> None:
    python, site = venv
    work = tmp_path / "work"
    work.mkdir()
    before = sorted(p for p in site.joinpath("bat").rglob("*") if "__pycache__" not in p.parts)
    bat = ["-c", "import sys; from bat.cli import main; sys.exit(main(sys.argv[1:]))"]
    ran = _run(python, work, *bat, "run", "-t", "reference:random", "-b", "pnpoly", "-n", "5")
    assert ran.returncode == 0 and "replaying" in ran.stdout.splitlines()[0], ran.stderr
    verified = _run(python, work, *bat, "verify", "-b", "pnpoly", "--first")
    assert verified.returncode == 0 and "1 of 1 configurations ok" in verified.stdout, verified.stdout + verified.stderr
    analyzed = _run(python, work, *bat, "analyze", "-d", "shipped/bat2-kerneltuner/pnpoly_RTX_3090", "--no-importance",
                    "-o", "report")
    assert analyzed.returncode == 0, analyzed.stderr
    assert json.loads((work / "report" / "results.json").read_text())["benchmarks"]
    from own_data_files import kt_cache_new, toy, write

    cache = write(kt_cache_new(toy()), tmp_path / "toy_RTX_3090.json")
    checked = _run(python, work, "-c", CHECK, str(site), str(cache))
    assert checked.returncode == 0, checked.stderr
    assert "inside the installed package" in checked.stderr
    written = checked.stdout.strip().splitlines()[-1]
    assert "bat-data/datasets/toy_RTX_3090.parquet" in written and "bat-data/runs/" in written
    assert sorted(p for p in site.joinpath("bat").rglob("*") if "__pycache__" not in p.parts) == before
