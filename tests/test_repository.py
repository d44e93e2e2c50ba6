"""The repository stands alone: no absolute path in any tracked file, no doc naming a file that is gone."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: an absolute path of a machine: a Unix home, root, scratch or temporary folder, or a Windows drive
ABSOLUTE = re.compile(r"""(?:^|[\s"'`(=:,\[])(?:/(?:work|root|home|Users|tmp|mnt|scratch)/|[A-Za-z]:\\\\?[A-Za-z])""")
#: folders that are never part of the repository's content
IGNORED = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis", "build", "runs", "out"}


def tracked_files() -> list[Path]:
    """Files git tracks (every file outside ignored folders when this is not a git checkout)."""
    try:
        listing = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        return [ROOT / name for name in listing.decode().split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        return [p for p in ROOT.rglob("*") if p.is_file() and not IGNORED & set(p.relative_to(ROOT).parts)
                and not any(part.endswith(".egg-info") for part in p.parts)]


def text_of(path: Path) -> str | None:
    """The file as text, None for a binary file (NUL bytes), a link to a folder (bat/analysis) or a file
    deleted from the working tree."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return None
    return None if b"\0" in data[:8192] else data.decode("utf-8", errors="replace")


def absolute_paths(text: str) -> list[str]:
    """Lines of ``text`` that name an absolute path."""
    return [line.strip() for line in text.splitlines() if ABSOLUTE.search(line)]


def test_the_pattern_finds_absolute_paths_and_nothing_else() -> None:
    assert absolute_paths('DATA = Path("' + "/wo" + 'rk/shared/datasets")')
    assert absolute_paths("see " + "/ho" + "me/me/x.json and")
    assert absolute_paths("open('" + "C:" + "\\\\Users\\\\me')")
    assert absolute_paths("cd " + "/t" + "mp/x")
    assert not absolute_paths("https://github.com/home/work/ and results/bat2/x.parquet, ../shared/datasets")
    assert not absolute_paths("a ratio 3/4 of work/items")


def test_no_tracked_file_names_an_absolute_path() -> None:
    files = tracked_files()
    assert len(files) > 50
    hits = []
    for path in files:
        text = text_of(path)
        if text is not None:
            hits += [f"{path.relative_to(ROOT)}: {line}" for line in absolute_paths(text)]
    assert hits == []


#: a path of this repository named in a doc: a top-level folder, a slash, more (placeholders like <name> skipped)
DOC_PATH = re.compile(r"(?<![\w/.-])((?:bat|analysis|tuner_adapters|benchmarks|tests|bench|docs|results|notebooks|"
                      r"\.ci|\.github)/[\w./<>*{}-]*[\w/])")


def named_paths(text: str) -> list[str]:
    """Repository paths a doc names (without placeholders)."""
    return [n for n in DOC_PATH.findall(text) if not set(n) & set("<>*{}")]


def test_docs_name_only_files_that_exist() -> None:
    assert named_paths("see `bat/backends/live.py` and bat/record.py, benchmarks/<name>/space.json") == [
        "bat/backends/live.py", "bat/record.py"]
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted(ROOT.glob("*/*/PROVENANCE.md")),
            *sorted((ROOT / "bench").glob("*.md"))]
    missing = [f"{doc.relative_to(ROOT)}: {name}" for doc in docs for name in named_paths(doc.read_text())
               if not (ROOT / name.rstrip("/")).exists()]
    assert missing == []


def test_design_layout_is_generated_from_the_tree() -> None:
    """docs/DESIGN.md lists every module (python docs/layout.py rewrites it)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("layout", ROOT / "docs" / "layout.py")
    assert spec is not None and spec.loader is not None
    layout = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(layout)
    text = layout.DESIGN.read_text(encoding="utf-8")
    assert layout.render(text) == text, "docs/DESIGN.md is out of date: run python docs/layout.py"
    for path in (ROOT / "bat").rglob("*.py"):
        assert f"  {path.name}" in text or path.name == "__init__.py", path
