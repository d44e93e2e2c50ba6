"""The source distribution and its wheel, installed with their extras in a fresh venv outside the checkout.

The sdist is built from a copy of the files git tracks (pyproject.toml maps
``analysis/`` and the other top-level folders into the ``bat`` namespace; no
link), the wheel from the unpacked sdist (what ``pip install`` of an sdist
does), and the wheel is installed with the extras ``tuners`` and ``analysis``
(the lock file's versions, from uv's cache: a lock that did not
satisfy the wheel's metadata would fail here) and the development tools into a
new venv in a temporary folder. From there: ``bat run --tuner optuna``,
``bat run``, ``bat verify --first`` on a benchmark, ``bat analyze`` on a
dataset, an import into the data folder, and tests of the unpacked sdist run
against the installed wheel. site-packages then holds the project's one
namespace ``bat`` and nothing generic at top level, and nothing is ever
written into the installed package.
"""

from __future__ import annotations

import email
import json
import os
import shutil
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path
from typing import NamedTuple

import pytest
from package_map import ROOT
from test_repository import tracked_files

#: what the project's wheel may put at the top of site-packages
OURS = {"bat", "bat_autotune-0.1.0.dist-info"}
#: what the sdist adds to the tracked files: its metadata, setuptools' configuration and egg-info
SDIST_EXTRA = {"PKG-INFO", "setup.cfg"}

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


class Installed(NamedTuple):
    python: Path
    site: Path
    sdist: Path
    wheel: Path
    unpacked: Path
    src: Path  # the copy of the tracked files the sdist was built from (its uv.lock)


def _uv() -> str:
    uv = os.environ.get("UV") or shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not on PATH (the README's commands run the tests through `uv run`, which sets UV)")
    return uv


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Installed:
    """The sdist, its wheel and a venv with the wheel, its extras tuners and analysis, and the dev tools."""
    uv, tmp = _uv(), tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    for path in tracked_files():
        if path.is_file():
            (src / path.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, src / path.relative_to(ROOT))
    dist = tmp / "dist"
    subprocess.run([uv, "build", "--offline", "--out-dir", str(dist), str(src)], check=True, capture_output=True,
                   timeout=600)
    (sdist,), (wheel,) = dist.glob("bat_autotune-*.tar.gz"), dist.glob("bat_autotune-*.whl")
    with tarfile.open(sdist) as archive:
        # the "data" filter where tarfile has it (3.11.4 on; Debian 12's /usr/bin/python3 is 3.11.2)
        archive.extractall(tmp / "unpacked", **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    (unpacked,) = (tmp / "unpacked").iterdir()
    python = _install(uv, wheel, src, tmp / "venv", ("tuners", "analysis"), dev=True)
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    return Installed(python, site, sdist, wheel, unpacked, src)


def _install(uv: str, wheel: Path, src: Path, env: Path, extras: tuple[str, ...], dev: bool = False) -> Path:
    """A new venv at ``env`` with ``wheel[extras]`` at the versions of ``src``'s uv.lock; its python."""
    requirements = env.with_suffix(".requirements.txt")
    subprocess.run([uv, "export", "--frozen", "--offline", "--no-hashes", "--no-emit-project", "--no-default-groups",
                    *(a for e in extras for a in ("--extra", e)), *(("--group", "dev") if dev else ()),
                    "--output-file", str(requirements)], cwd=src, check=True, capture_output=True, timeout=300)
    subprocess.run([uv, "venv", "--offline", "--python", sys.executable, str(env)], check=True, capture_output=True,
                   timeout=300)
    python = env / "bin" / "python"
    name = f"bat-autotune[{','.join(extras)}]" if extras else "bat-autotune"
    subprocess.run([uv, "pip", "install", "--python", str(python), "-r", str(requirements),
                    f"{name} @ {wheel.as_uri()}"], check=True, capture_output=True, timeout=600)
    return python


def _run(python: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("BAT_DATA_DIR", "BAT_RESULTS", "PYTHONPATH", "UV")}
    env["COLUMNS"] = "200"
    return subprocess.run([python, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_one_namespace_and_py_typed(venv) -> None:
    site = venv.site
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
    python, site = venv.python, venv.site
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


def test_the_sdist_holds_every_tracked_file(venv) -> None:
    with tarfile.open(venv.sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    files = {n for n in names if not (venv.unpacked / n).is_dir()}
    expected = {str(p.relative_to(ROOT)) for p in tracked_files() if p.is_file()} | SDIST_EXTRA
    assert {n for n in files if not n.startswith("bat_autotune.egg-info/")} == expected
    assert not [n for n in names if "__pycache__" in n or n.startswith("bat/analysis")]


def test_the_wheel_declares_its_extras(venv) -> None:
    with zipfile.ZipFile(venv.wheel) as archive:
        (name,) = (n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_bytes(archive.read(name))
    extras = set(meta.get_all("Provides-Extra"))
    assert {"tuners", "analysis", "dask", "nvrtc", "gp", "gpu-cuda12", "gpu-cuda13", "all"} <= extras
    requires = meta.get_all("Requires-Dist")
    assert 'optuna==5.0.0; extra == "tuners"' in requires and 'catboost>=1.2.7; extra == "analysis"' in requires
    assert [r for r in requires if "extra" not in r and r.split(">")[0].split("=")[0].split("<")[0] not in
            ("numpy", "pandas", "pyarrow", "typer", "rich", "regex", "cryptography")] == []
    assert not [r for r in requires if r.startswith(("skops", "dask-jobqueue"))]


def test_optuna_runs_from_the_tuners_extra(venv, tmp_path) -> None:
    """`pip install "bat-autotune[tuners]"` alone (no analysis extra): the `bat` command runs Optuna on the shipped
    data; the core alone says in one line which extra it lacks."""
    python = _install(_uv(), venv.wheel, venv.src, tmp_path / "venv", ("tuners",))
    work = tmp_path / "work"
    work.mkdir()
    argv = (str(python.parent / "bat"), "run", "--tuner", "optuna", "-b", "pnpoly", "-n", "5", "--seed", "1")
    ran = _run(python, work, *argv)
    assert ran.returncode == 0, ran.stderr
    assert "replaying" in ran.stdout.splitlines()[0] and list((work / "bat-data" / "runs").glob("*optuna*"))
    assert subprocess.run([python, "-c", "import catboost"], capture_output=True).returncode != 0  # no analysis
    bare = _install(_uv(), venv.wheel, venv.src, tmp_path / "core", ())
    refused = _run(bare, work, str(bare.parent / "bat"), *argv[1:])
    assert refused.returncode == 2 and "pip install 'bat-autotune[tuners]'" in refused.stderr, refused.stderr


def test_the_tests_run_from_the_unpacked_sdist(venv) -> None:
    """The sdist's own tests of the namespace and the repository pass from it, against the installed wheel
    (`-P`: the unpacked folder's bat/ must not shadow the installed namespace, as with the README's `pytest`)."""
    ran = _run(venv.python, venv.unpacked, "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "tests/test_repository.py", "tests/test_architecture.py")
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
    assert " passed" in ran.stdout.splitlines()[-1] and "skipped" not in ran.stdout.splitlines()[-1]
