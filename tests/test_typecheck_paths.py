""".ci/typecheck runs mypy on a tree of links (the mapped namespace) and reports the repository's own paths."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _typecheck():
    loader = importlib.machinery.SourceFileLoader("bat_typecheck", str(ROOT / ".ci" / "typecheck"))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


def test_a_mapped_package_is_reported_at_its_folder_and_bat_at_bat() -> None:
    typecheck = _typecheck()
    mapped = typecheck.prefixes()
    line = 'bat/analysis/compare/store.py:72: error: Argument 1  [arg-type]'
    assert typecheck.repository_path(line, mapped) == 'analysis/compare/store.py:72: error: Argument 1  [arg-type]'
    assert typecheck.repository_path("bat/core/space.py:1: note: x", mapped) == "bat/core/space.py:1: note: x"
    assert typecheck.repository_path("bat/tuner_adapters/reaper.py:9: error", mapped).startswith("tuner_adapters/")
    assert typecheck.repository_path("Success: no issues found", mapped) == "Success: no issues found"


def test_every_reported_folder_exists() -> None:
    for _, folder in _typecheck().prefixes():
        assert (ROOT / folder).is_dir(), folder
