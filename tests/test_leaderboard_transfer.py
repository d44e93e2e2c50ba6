"""``bat leaderboard`` with a transfer study among its inputs: its own ranking per split, its runs sealed (issue 40).

A tiny real study (convolution_milo, five GPUs of two vendors; transfer:best and random search as the floor,
budget 6, two seeds) beside a small campaign (tests/test_leaderboard.py's).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_leaderboard import FIRST, RANDOM, _build, _Links, _one_error, _run, _sign_again, _verify, refusals

from bat.cli import EXIT_FOUND, EXIT_OK, EXIT_USAGE, main
from bat.leaderboard import seal
from bat.leaderboard.pages import slug

pytestmark = pytest.mark.xdist_group("leaderboard")


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("transfer")
    assert main(["compare", "--study", "transfer", "-t", "transfer:best,reference:random", "-b", "convolution_milo",
                 "--budgets", "6", "-r", "2", "--no-plots", "-o", str(root / "study")]) == EXIT_OK
    return {"study": root / "study", "campaign": _run(root / "campaign", (RANDOM, FIRST), (("pnpoly", "RTX_3090"),))}


@pytest.fixture()
def key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BAT_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data" / "keys" / "leaderboard.pem"


@pytest.fixture()
def site(folders, key, tmp_path, capsys) -> Path:
    out = tmp_path / "site"
    _build([folders["campaign"], folders["study"]], out, capsys)
    return out


def _text(page: Path) -> str:
    return re.sub(r"<[^>]+>", " ", page.read_text())


def test_a_transfer_study_gets_its_own_ranking_and_its_runs_are_sealed(folders, site, capsys) -> None:
    results = json.loads((folders["study"] / "results.json").read_text())
    standings = json.loads((site / "standings.json").read_text())
    # the campaign's ranking holds the campaign's tuners only: a tuner given a prior is never ranked with them
    assert {r["tuner"] for r in standings["overall"]} == {"reference:random", "first"}
    assert "transfer:best" not in standings["tuners"]
    (study,) = standings["transfer"]
    assert study["floor"] == "reference:random" and study["budget"] == 6
    assert {t["label"]: t["prior"] for t in study["tuners"]} == {"transfer:best": True, "reference:random": False}
    assert [s["prior"] for s in study["splits"]] == [s["prior"] for s in results["study"]["splits"]]
    for split in study["splits"]:
        aggregate = results["methodology"][split["prior"]]["aggregate"]
        assert {r["tuner"] for r in split["ranking"]} == {"transfer:best", "reference:random"}
        for row in split["ranking"]:
            assert row["evaluations"]["score"] == aggregate[row["tuner"]]["evaluations"]["score"]
            assert row["time"]["ci_low"] == aggregate[row["tuner"]]["time"]["ci_low"]
        scores = [r["evaluations"]["score"] for r in split["ranking"]]
        assert scores == sorted(scores, reverse=True)
        assert len(split["targets"]) == len(next(s for s in results["study"]["splits"]
                                                 if s["prior"] == split["prior"])["targets"])
    first = study["splits"][0]["targets"][0]
    row = next(r for r in results["rows"] if (r["split"], f"{r['benchmark']}/{r['gpu']}", r["label"], r["goal"])
               == ("all-others", first["target"], "transfer:best", 1.1))
    mine = next(g for g in first["goals"]["transfer:best"] if g["goal"] == 1.1)
    assert (mine["median"], mine["censored"], mine["gain"]) == (row["median"], row["censored"], row["gain"])
    page = site / "transfer" / f"1-{slug('study')}.html"
    text = _text(page)
    assert "transfer:best" in text and "reference:random" in text and "no (the floor)" in text
    assert text.count("Held out:") == sum(len(s["targets"]) for s in results["study"]["splits"])
    assert f'href="1-{slug("study")}.html"' in (site / "transfer" / "index.html").read_text()
    assert 'href="transfer/index.html"' in (site / "index.html").read_text()
    tuners = (site / "tuner" / "index.html").read_text()
    assert f'href="../transfer/1-{slug("study")}.html"' in tuners and "transfer:best" in tuners
    for page in (*sorted((site / "transfer").glob("*.html")), site / "tuner" / "index.html"):
        links = _Links()
        links.feed(page.read_text())
        assert links.targets and all((page.parent / t).resolve().is_file() for t in links.targets), page
    manifest = json.loads((site / seal.MANIFEST).read_text())
    assert len(manifest["transfer_runs"]) == len(results["runs"])
    assert {r["run_id"] for r in manifest["transfer_runs"]} == {r["meta"]["run_id"] for r in results["runs"]}
    assert all(r["prior"] == [] for r in manifest["transfer_runs"] if r["label"] == "reference:random")
    assert main(["leaderboard", "--verify", str(site), "--json"]) == EXIT_OK
    assert json.loads(capsys.readouterr().out)["transfer_studies"] == 1


def _stored_study(site: Path) -> Path:
    doc = json.loads((site / seal.MANIFEST).read_text())
    return site / next(s["path"] for s in doc["sources"] if s["name"] == "study")


def _reseal(site: Path, key: Path, changed: Path) -> dict:
    """The manifest naming ``changed``'s new digest (and its source's), signed again by the site's key."""
    doc = json.loads((site / seal.MANIFEST).read_text())
    rel = changed.relative_to(site).as_posix()
    doc["files"][rel] = seal.digest(changed)
    for s in doc["sources"]:
        if s["path"] == rel:
            s["sha256"] = seal.digest(changed)
    _sign_again(site, key, doc)
    return doc


def test_a_changed_byte_in_the_stored_study_is_refused(site, capsys) -> None:
    stored = _stored_study(site)
    data = bytearray(stored.read_bytes())
    data[len(data) // 2] ^= 0x01
    stored.write_bytes(bytes(data))
    out = _verify(site, capsys, EXIT_FOUND)
    assert out.count("\n") == 1 and out.startswith(f"refused: {stored.relative_to(site).as_posix()}: "), out


def test_a_dropped_run_a_changed_median_or_seed_signed_again_is_refused(folders, key, tmp_path, capsys) -> None:
    for change, named in ((lambda d: d["runs"].pop(), "results.json"),
                          (lambda d: d["rows"][0].update(median=d["rows"][0]["median"] - 1), "standings.json"),
                          (lambda d: d["runs"][0]["meta"].update(seed=1), seal.MANIFEST)):
        site = tmp_path / f"site-{named}"
        _build([folders["campaign"], folders["study"]], site, capsys)
        stored = _stored_study(site)
        doc = json.loads(stored.read_text())
        change(doc)
        stored.write_text(json.dumps(doc))
        _reseal(site, key, stored)
        out = _verify(site, capsys, EXIT_FOUND)
        assert out.count("\n") == 1 and out.startswith("refused: "), out
        assert named in out.split(":")[1], out


def test_a_transfer_study_of_another_shape_is_refused_in_one_line(folders, key, tmp_path, capsys) -> None:
    doc = json.loads((folders["study"] / "results.json").read_text())
    for name, change, why in (("no-median", lambda d: d["rows"][0].pop("median"), "'rows[0].median' missing"),
                              ("one-run-less", lambda d: d["runs"].pop(0), "'rows["),
                              ("other-sources", lambda d: d["rows"][0]["sources"].pop(), "not a cell of the study")):
        bad = tmp_path / name
        bad.mkdir()
        damaged = json.loads(json.dumps(doc))
        change(damaged)
        (bad / "results.json").write_text(json.dumps(damaged))
        text = _build([folders["campaign"], bad], tmp_path / "new", capsys, EXIT_USAGE)
        _one_error(text)
        assert f"{name}/results.json" in text and why in text, text
        assert not (tmp_path / "new").exists() and not key.exists()


@pytest.mark.slow
def test_a_damaged_transfer_study_is_refused_never_a_crash(folders) -> None:
    # each a SourceError (exit 2); any other exception fails the test
    assert refusals(json.loads((folders["study"] / "results.json").read_text())) > 200


@pytest.mark.filterwarnings("error::UserWarning")  # the empty ranking's figure is drawn without a warning
def test_a_study_alone_builds_a_site_with_an_empty_campaign_ranking(folders, key, tmp_path, capsys) -> None:
    site = tmp_path / "site"
    out = _build([folders["study"]], site, capsys)
    assert "0 tuners on 0 targets, 1 transfer studies" in out
    standings = json.loads((site / "standings.json").read_text())
    assert standings["overall"] == [] and len(standings["transfer"]) == 1
    assert _verify(site, capsys, EXIT_OK).startswith("verified: ")
