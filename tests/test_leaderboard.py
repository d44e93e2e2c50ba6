"""``bat leaderboard``: the site from compare results, its numbers, its seal, and every refusal (issue 40)."""

from __future__ import annotations

import copy
import hashlib
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest

from bat.analysis.compare.study import compare
from bat.campaign.design import Campaign, TunerSpec
from bat.cli import EXIT_FOUND, EXIT_OK, EXIT_USAGE, main
from bat.leaderboard import seal
from bat.leaderboard.pages import render, slug
from bat.leaderboard.sources import Source, SourceError, check_schema
from bat.leaderboard.standings import derive

pytestmark = pytest.mark.xdist_group("leaderboard")

RANDOM, GENETIC = TunerSpec.parse("reference:random"), TunerSpec.parse("reference:genetic")
FIRST = TunerSpec.parse("first=bat.testing.crippled_tuner:FirstValidTuner")


def _run(out: Path, tuners: tuple[TunerSpec, ...], targets: tuple[tuple[str, str], ...], seed: int = 0) -> Path:
    # a declared tuner charge: the time axis is computed, not measured, so every number is reproducible
    compare(Campaign(tuners=tuners, targets=targets, budgets=(4, 8), repeats=3, seed=seed, tuner_charge_s=0.001),
            out, plots=False)
    return out


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two campaigns on different targets (one tuner in both), and one that reruns a cell with another seed."""
    root = tmp_path_factory.mktemp("compare")
    return {"a": _run(root / "a", (RANDOM, FIRST), (("pnpoly", "RTX_3090"),)),
            "b": _run(root / "b", (RANDOM, GENETIC), (("convolution", "RTX_3090"),)),
            "clash": _run(root / "clash", (RANDOM,), (("pnpoly", "RTX_3090"),), seed=7)}


@pytest.fixture()
def key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BAT_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data" / "keys" / "leaderboard.pem"


def _build(folders: list[Path], out: Path, capsys: pytest.CaptureFixture[str], code: int = EXIT_OK) -> str:
    assert main(["leaderboard", *map(str, folders), "--out", str(out)]) == code
    captured = capsys.readouterr()
    return captured.out + captured.err


def _verify(site: Path, capsys: pytest.CaptureFixture[str], code: int, *extra: str) -> str:
    assert main(["leaderboard", "--verify", str(site), *extra]) == code
    captured = capsys.readouterr()
    return captured.out + captured.err


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.targets += [v for k, v in attrs if k in ("href", "src") and v]


def test_site_ranks_by_the_methodology_score_and_every_link_resolves(folders, key, tmp_path, capsys) -> None:
    site = tmp_path / "site"
    _build([folders["a"], folders["b"]], site, capsys)
    assert key.is_file() and oct(key.stat().st_mode & 0o777) == "0o600"  # made in the data folder
    standings = json.loads((site / "standings.json").read_text())
    overall = standings["overall"]
    assert {r["tuner"] for r in overall} == {"reference:random", "first", "reference:genetic"}
    scores = [r["evaluations"]["score"] for r in overall]
    assert scores == sorted(scores, reverse=True) and [r["rank"] for r in overall] == [1, 2, 3]
    by_time = sorted(overall, key=lambda r: -r["time"]["score"])
    assert [r["rank_time"] for r in by_time] == [1, 2, 3]
    # one folder's tuner: its own bootstrap interval; random ran in both: the mean of its two targets
    results = {n: json.loads((folders[n] / "results.json").read_text())["methodology"] for n in ("a", "b")}
    first = next(r for r in overall if r["tuner"] == "first")
    assert first["evaluations"]["interval"] == "exact"
    assert first["evaluations"]["score"] == results["a"]["aggregate"]["first"]["evaluations"]["score"]
    rnd = next(r for r in overall if r["tuner"] == "reference:random")["time"]
    per_target = [results["a"]["targets"]["pnpoly/RTX_3090"]["scores"]["reference:random"]["time"]["score"],
                  results["b"]["targets"]["convolution/RTX_3090"]["scores"]["reference:random"]["time"]["score"]]
    assert rnd["interval"] == "normal" and rnd["targets"] == 2
    assert rnd["score"] == pytest.approx(sum(per_target) / 2) and rnd["ci_low"] < rnd["score"] < rnd["ci_high"]
    index = (site / "index.html").read_text()
    shown = re.findall(r'<a href="tuner/[^"]+-[0-9a-f]{8}\.html">([^<]+)</a>', index)
    assert shown == [r["tuner"] for r in overall]  # the page lists them in the ranking's order
    for label in ("reference:random", "first", "reference:genetic"):
        assert (site / "tuner" / f"{slug(label)}.html").is_file() and f">{label}<" in index
    for page in ("benchmark/" + slug("pnpoly"), "gpu/" + slug("RTX_3090"), "target/" + slug("pnpoly/RTX_3090")):
        assert (site / f"{page}.html").is_file()
    pages = sorted(site.rglob("*.html"))
    for page in pages:
        text = page.read_text()
        assert "http://" not in text and "https://" not in text  # opens offline: nothing from the network
        parser = _Links()
        parser.feed(text)
        for target in parser.targets:
            assert (page.parent / target).resolve().is_file(), f"{page.relative_to(site)} -> {target}"
    svg = (site / "figures" / "overall.svg").read_text()
    assert svg.count("reference:genetic") >= 1 and "<dc:date>" not in svg
    assert "prefers-color-scheme: dark" in (site / "assets" / "site.css").read_text()
    cells = [c for n in ("a", "b") for c in json.loads((folders[n] / "results.json").read_text())["cells"]
             if c["label"] == "reference:random" and c["budget"] == 4]
    at_4 = {r["tuner"]: r for r in standings["budgets"]["4"]}
    assert at_4["reference:random"]["targets"] == 2 == len(cells)
    assert at_4["reference:random"]["score"] == pytest.approx(sum(c["score"] for c in cells) / 2)
    assert [r["rank"] for r in standings["budgets"]["4"]] == [1, 2, 3] and (site / "budget" / "4.html").is_file()
    facts = standings["targets"]["pnpoly/RTX_3090"]["dataset"]
    shipped = Path(__file__).resolve().parents[1] / "results" / "bat2-kerneltuner" / "pnpoly_RTX_3090.parquet"
    assert facts["sha256"] == hashlib.sha256(shipped.read_bytes()).hexdigest()
    assert facts["licence"].startswith("MIT") and facts["dataset"].endswith("pnpoly_RTX_3090")
    page = (site / "target" / f"{slug('pnpoly/RTX_3090')}.html").read_text()
    assert facts["sha256"] in page and "<dd>MIT" in page
    assert _verify(site, capsys, EXIT_OK).startswith("verified: ")


def test_the_same_inputs_give_the_same_site(folders, key, tmp_path, capsys) -> None:
    _build([folders["a"]], tmp_path / "one", capsys)
    _build([folders["a"]], tmp_path / "two", capsys)
    one = {p.relative_to(tmp_path / "one"): p.read_bytes() for p in (tmp_path / "one").rglob("*") if p.is_file()}
    two = {p.relative_to(tmp_path / "two"): p.read_bytes() for p in (tmp_path / "two").rglob("*") if p.is_file()}
    assert one == two  # the same key, the same figures, the same signature (Ed25519 is deterministic)


@pytest.fixture()
def site(folders, key, tmp_path, capsys) -> Path:
    out = tmp_path / "site"
    _build([folders["a"], folders["b"]], out, capsys)
    return out


@pytest.mark.parametrize("path", ["index.html", "standings.json", "figures/overall.json", "figures/overall.svg",
                                  "data/2/results.json", "data/targets.json", "assets/sort.js", "assets/plotly.min.js",
                                  "assets/plots.js", seal.MANIFEST,
                                  seal.SIGNATURE])
def test_a_changed_byte_anywhere_is_refused_naming_the_file(site, capsys, path) -> None:
    target = site / path
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x01
    target.write_bytes(bytes(data))
    out = _verify(site, capsys, EXIT_FOUND)
    named = seal.MANIFEST if path in (seal.MANIFEST, seal.SIGNATURE) else path
    assert out.count("\n") == 1 and out.startswith(f"refused: {named}: "), out


def _sign_again(site: Path, key: Path, doc: dict) -> None:
    """Write ``doc`` as the site's manifest, signed with the key that built it (a signer who cheats)."""
    signer = seal.read_key(key)
    assert signer is not None
    data = (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode()
    (site / seal.MANIFEST).write_bytes(data)
    (site / seal.SIGNATURE).write_text(seal.sign(data, signer) + "\n")


def test_a_signed_manifest_naming_a_file_outside_the_site_is_refused(site, key, tmp_path, capsys) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("not the site's")
    doc = json.loads((site / seal.MANIFEST).read_text())
    doc["files"]["../secret.txt"] = seal.digest(outside)
    _sign_again(site, key, doc)
    out = _verify(site, capsys, EXIT_USAGE)
    _one_error(out)
    assert "every path a plain name inside the site" in out


def test_a_symbolic_link_in_the_site_is_refused(site, tmp_path, capsys) -> None:
    (tmp_path / "real.html").write_text("<p>elsewhere</p>")
    (site / "target" / "link.html").symlink_to(tmp_path / "real.html")
    out = _verify(site, capsys, EXIT_FOUND)
    assert out.startswith("refused: target/link.html: a symbolic link"), out


def test_a_number_changed_and_signed_again_is_refused_by_the_re_derivation(site, key, capsys) -> None:
    standings = site / "standings.json"
    text = standings.read_text()
    changed = re.sub(r'"score": (-?[0-9.]+)', lambda m: f'"score": {float(m.group(1)) + 0.5}', text, count=1)
    assert changed != text
    standings.write_text(changed)
    doc = json.loads((site / seal.MANIFEST).read_text())
    doc["files"]["standings.json"] = seal.digest(standings)
    _sign_again(site, key, doc)
    out = _verify(site, capsys, EXIT_FOUND)
    assert out.startswith("refused: standings.json: differs from what the stored results give"), out


def test_another_signer_is_refused_when_the_key_is_pinned(site, tmp_path, capsys) -> None:
    public = (site / seal.PUBLIC_KEY).read_text().strip()
    other = seal.create_key(tmp_path / "other.pem")
    data = (site / seal.MANIFEST).read_bytes()
    (site / seal.SIGNATURE).write_text(seal.sign(data, other) + "\n")
    (site / seal.PUBLIC_KEY).write_text(seal.public_hex(other) + "\n")
    assert _verify(site, capsys, EXIT_OK).startswith("verified: ")  # whole and consistent, by another key
    out = _verify(site, capsys, EXIT_FOUND, "--expect-key", public)
    assert out.startswith(f"refused: {seal.PUBLIC_KEY}: "), out


def _one_error(text: str) -> None:
    assert text.startswith("error: ") and text.count("\n") == 1, text


def test_unsigned_and_partly_signed_sites_are_bad_input(site, capsys) -> None:
    (site / "extra.html").write_text("<p>not sealed</p>")
    out = _verify(site, capsys, EXIT_USAGE)
    _one_error(out)
    assert "partly signed: extra.html is not in the manifest" in out
    (site / "extra.html").unlink()
    (site / seal.SIGNATURE).unlink()
    out = _verify(site, capsys, EXIT_USAGE)
    _one_error(out)
    assert f"partly signed: {seal.SIGNATURE} missing" in out
    for name in seal.SEAL_FILES:
        (site / name).unlink(missing_ok=True)
    out = _verify(site, capsys, EXIT_USAGE)
    _one_error(out)
    assert "unsigned" in out


def _nothing_written(tmp_path: Path, key: Path) -> None:
    assert not (tmp_path / "new").exists() and not key.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".new")]


def test_bad_inputs_write_nothing(folders, key, tmp_path, capsys) -> None:
    out = tmp_path / "new"
    other = tmp_path / "other"
    other.mkdir()
    (other / "results.json").write_text(json.dumps({"campaign": {"tuners": []}, "study": "transfer"}))
    text = _build([folders["a"], other], out, capsys, EXIT_USAGE)
    _one_error(text)
    assert "other/results.json" in text and "not the results.json of bat compare" in text
    _nothing_written(tmp_path, key)
    text = _build([folders["a"], folders["clash"]], out, capsys, EXIT_USAGE)
    _one_error(text)
    assert "conflicting runs of reference:random on pnpoly/RTX_3090" in text
    _nothing_written(tmp_path, key)
    text = _build([tmp_path / "no-such-folder"], out, capsys, EXIT_USAGE)
    _one_error(text)
    _nothing_written(tmp_path, key)
    out.mkdir()
    text = _build([folders["a"]], out, capsys, EXIT_USAGE)
    _one_error(text)
    assert "exists" in text and not any(out.iterdir()) and not key.exists()


def test_the_same_folder_twice_counts_its_runs_once(folders, key, tmp_path, capsys) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(folders["a"], copy)
    _build([folders["a"], copy], tmp_path / "site", capsys)
    standings = json.loads((tmp_path / "site" / "standings.json").read_text())
    alone = json.loads((folders["a"] / "results.json").read_text())["methodology"]["aggregate"]
    for row in standings["overall"]:
        assert row["evaluations"]["score"] == alone[row["tuner"]]["evaluations"]["score"]
        assert row["evaluations"]["targets"] == 1


def test_json_documents_follow_their_schema(folders, key, tmp_path, capsys) -> None:
    schema = json.loads((Path(__file__).resolve().parents[1] / "bat/schemas/cli/leaderboard.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    site = tmp_path / "site"
    docs = []
    for args, code in ((["leaderboard", str(folders["a"]), "--out", str(site)], EXIT_OK),
                       (["leaderboard", "--verify", str(site)], EXIT_OK)):
        assert main([*args, "--json"]) == code
        docs.append(json.loads(capsys.readouterr().out))
    (site / "tuner" / f"{slug('first')}.html").write_text("changed")
    assert main(["leaderboard", "--verify", str(site), "--json"]) == EXIT_FOUND
    docs.append(json.loads(capsys.readouterr().out))
    for doc in docs:
        validator.validate(doc)
    assert docs[0]["key_created"] and docs[1]["verified"] and docs[1]["public_key"] == docs[0]["public_key"]
    assert docs[2] == {**docs[2], "verified": False, "file": f"tuner/{slug('first')}.html", "exit_code": 3}


def test_convergence_and_ecdf_curves_agree_with_the_runs(folders, key, tmp_path, capsys) -> None:
    site = tmp_path / "site"
    _build([folders["a"]], site, capsys)
    runs = json.loads((folders["a"] / "results.json").read_text())["runs"]
    target = json.loads((site / "standings.json").read_text())["targets"]["pnpoly/RTX_3090"]
    random_runs = [r["meta"] for r in runs if r["meta"]["label"] == "reference:random"]
    curve = target["convergence"]["reference:random"]
    assert curve["runs"] == len(random_runs) == 3 and len(curve["median"]) == 8
    for budget in (4, 8):  # one run at 8 evaluations: its trace holds the best at 4 too
        reported = sorted(m["per_budget"][str(budget)]["rel_perf"] for m in random_runs)
        assert curve["median"][budget - 1] == pytest.approx(reported[1], abs=1e-6)
        assert curve["q1"][budget - 1] <= curve["median"][budget - 1] <= curve["q3"][budget - 1]
    assert curve["median"] == sorted(curve["median"])  # the best so far never gets worse
    first = target["convergence"]["first"]  # run once per budget: the curves are those of its 8-evaluation runs
    assert first["runs"] == 3
    page = (site / "target" / f"{slug('pnpoly/RTX_3090')}.html").read_text()
    name = f"{slug('pnpoly/RTX_3090')}-convergence"
    inline = re.search(rf'<script type="application/json" id="input-{name}">(.*?)</script>', page)
    assert inline and json.loads(inline.group(1)) == json.loads((site / "figures" / f"{name}.json").read_text())
    assert f'data-input="input-{name}"' in page and '<script src="../assets/plots.js">' in page
    assert (site / "assets" / "plotly.min.js").stat().st_size > 1_000_000  # Plotly's bundle, copied in
    hits = json.loads((folders["a"] / "results.json").read_text())["methodology"]["hitting_times"]
    mine = [h["evaluations"] for h in hits if h["label"] == "reference:random"]
    share = target["ecdf"]["reference:random"]["share"]
    assert target["ecdf"]["reference:random"]["pairs"] == len(mine) == 3 * 6  # 3 runs, 6 fixed targets each
    for k in (1, 4, 8):
        assert share[k - 1] == pytest.approx(sum(e is not None and e <= k for e in mine) / len(mine), abs=1e-6)
    assert share == sorted(share) and 0.0 < share[-1] < 1.0


def _paths(obj: object, prefix: tuple = ()) -> list[tuple]:
    """Every key of ``obj`` (the first item of each list), as paths from the top, at most 6 deep."""
    if len(prefix) >= 6:
        return []
    if isinstance(obj, dict):
        return [p for k, v in obj.items() for p in ((*prefix, k), *_paths(v, (*prefix, k)))]
    if isinstance(obj, list) and obj:
        return [(*prefix, 0), *_paths(obj[0], (*prefix, 0))]
    return []


def refusals(doc: dict) -> int:
    """How many damaged copies of the results ``doc`` (each key deleted, or set to a string, null, a list or -1)
    are refused with SourceError; another exception fails the calling test.

    A copy is new along the damaged key's path only (a copy of the whole document each time cost as much as
    checking it): the rest is shared with ``doc``, which must come out unchanged."""
    whole = json.dumps(doc, sort_keys=True)
    refused = 0
    for path in _paths(doc):
        for bad in ("delete", "x", None, [], -1):
            damaged = copy.copy(doc)
            parent = damaged
            for key in path[:-1]:
                parent[key] = copy.copy(parent[key])
                parent = parent[key]
            if bad == "delete":
                parent.pop(path[-1])
            else:
                parent[path[-1]] = bad
            try:
                check_schema(damaged, "results.json")
                render(derive([Source("a", b"", damaged)], {}))
            except SourceError:
                refused += 1
    assert json.dumps(doc, sort_keys=True) == whole, "checking a damaged copy changed the document it came from"
    return refused


def test_a_damaged_results_file_is_refused_never_a_crash(folders) -> None:
    # each a SourceError (exit 2); any other exception fails the test
    assert refusals(json.loads((folders["a"] / "results.json").read_text())) > 300
