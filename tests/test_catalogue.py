"""The light readers `bat list` uses give what the full ones give: descriptions, entry points.

``bat.core.catalogue.benchmark_description`` reads a space file without
building its space; ``bat.core.plugins.group`` serves every registry from one
scan of the installed entry points.
"""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from bat.core import catalogue, plugins
from bat.core.errors import SpaceSpecError
from bat.core.spacefile import read_space_json

GROUPS = ("bat.benchmarks", "bat.tuners", "bat.tuner_schemes", "bat.backends", "bat.datasets")
T1 = Path(__file__).resolve().parent / "fixtures" / "t1"


def test_every_registered_description_is_the_space_files() -> None:
    names = catalogue.benchmark_names()
    assert "gemm" in names
    for name in names:
        assert catalogue.benchmark_description(name) == read_space_json(catalogue.benchmark_path(name)).get(
            "description", ""), name


def _registered_as(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    monkeypatch.setattr(catalogue, "benchmark_path", lambda name: path)


@pytest.mark.parametrize("t1", sorted(T1.glob("*.json"))[:2], ids=lambda p: p.name)
def test_a_t1_file_is_described_as_its_conversion(monkeypatch: pytest.MonkeyPatch, t1: Path) -> None:
    _registered_as(monkeypatch, t1)
    assert catalogue.benchmark_description("x") == read_space_json(t1).get("description", "")


def test_a_malformed_space_file_gets_the_space_readers_error(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    bad = tmp_path / "space.json"
    bad.write_text('{"name": "x",\n  "parameters": [')
    _registered_as(monkeypatch, bad)
    with pytest.raises(SpaceSpecError, match="malformed JSON at line 2"):
        catalogue.benchmark_description("x")


def test_a_plain_space_file_without_description_is_empty(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "space.json"
    path.write_text(json.dumps({"name": "x", "parameters": [], "constraints": [], "problem_size": {}}))
    _registered_as(monkeypatch, path)
    assert catalogue.benchmark_description("x") == ""


@pytest.mark.parametrize("name", GROUPS)
def test_each_group_is_what_importlib_gives(name: str) -> None:
    mine = sorted((ep.name, ep.value) for ep in plugins.group(name))
    assert mine == sorted((ep.name, ep.value) for ep in entry_points(group=name))
    assert mine  # every group has entries in this checkout
