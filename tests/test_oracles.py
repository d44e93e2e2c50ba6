"""Oracles labelled: a tuner that reads the target's measurements says so, is listed so, and is compared apart."""

from __future__ import annotations

import pytest

from bat.cli import main
from bat.registry import make_tuner, tuner_entry, tuner_names


@pytest.mark.parametrize("name", tuner_names())
def test_the_registry_listing_agrees_with_the_tuners_own_declaration(name):
    assert tuner_entry(name).oracle == make_tuner(name).oracle


def test_bat_list_tuners_marks_oracles(capsys):
    assert main(["list", "tuners"]) == 0
    out = capsys.readouterr().out
    marked = [line for line in out.splitlines() if "[oracle]" in line and "profile" in line]
    assert marked and "exact" in marked[0]
    assert not any("reference:random" in line and "[oracle]" in line for line in out.splitlines())


def test_compare_refuses_an_oracle_unless_asked_and_then_shows_it_apart(tmp_path, capsys):
    args = ["compare", "--tuners", "random=reference:random,exact=profile:exact", "--benchmarks", "coulomb",
            "--budgets", "5", "--repeats", "2", "--no-plots"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert "profile:exact is an oracle" in err and "--oracles" in err
    assert not (tmp_path / "a").exists()
    assert main([*args, "--out", str(tmp_path / "b"), "--oracles"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("oracles ("))
    assert any(line.strip().startswith("random:") for line in lines[:head])
    assert any(line.strip().startswith("exact:") for line in lines[head:])


def test_only_an_oracle_reads_the_answer_key():
    """No tuner module reads the target's measurements but the profile searcher, whose exact mode is the oracle."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "tuner_adapters"
    readers = sorted(str(p.relative_to(root)) for p in root.rglob("*.py") if "answer_key" in p.read_text())
    assert readers == ["profile/search.py"]
    source = (root / "profile" / "search.py").read_text()
    assert source.count("= problem.answer_key") == 1
    assert 'if self.mode == "exact":\n            exact = problem.answer_key' in source
