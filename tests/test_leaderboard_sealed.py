"""``bat compare --sealed``: held-back targets, every tuner isolated, every run's digests; and the leaderboard's
reading and re-checking of them (issue 40)."""

from __future__ import annotations

import hashlib
import json
import shutil
import textwrap
from pathlib import Path

import pytest

from bat.cli import EXIT_FOUND, EXIT_OK, EXIT_USAGE, main
from bat.leaderboard import seal
from bat.leaderboard.pages import slug
from bat.leaderboard.sealed import code_digest, source_tree, trace_sha256
from bat.tuner_adapters.sandbox import landlock_abi

pytestmark = pytest.mark.xdist_group("leaderboard")

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "results" / "bat2-kerneltuner" / "pnpoly_RTX_3090.parquet"
needs_sandbox = pytest.mark.skipif(landlock_abi() == 0, reason="this kernel has no Landlock (--isolate)")


def _compare(held: Path, out: Path, *extra: str) -> int:
    return main(["compare", "--sealed", str(held), "--tuners", "reference:random,optuna:random", "--budgets", "4",
                 "--repeats", "2", "--tuner-charge", "0.001", "--no-plots", "--out", str(out), *extra])


@pytest.fixture(scope="module")
def sealed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sealed campaign on an organiser's folder (outside the repository) holding one dataset."""
    if landlock_abi() == 0:
        pytest.skip("this kernel has no Landlock (--isolate)")
    root = tmp_path_factory.mktemp("sealed")
    held = root / "held-back"
    held.mkdir()
    shutil.copyfile(SHIPPED, held / "target.parquet")
    assert _compare(held, root / "out") == EXIT_OK
    return root / "out"


@needs_sandbox
def test_every_run_records_its_digests(sealed) -> None:
    doc = json.loads((sealed / "results.json").read_text())
    record = doc["sealed"]
    assert doc["campaign"]["isolate"] is True and record["isolated"] is True
    sha = hashlib.sha256(SHIPPED.read_bytes()).hexdigest()
    assert record["datasets"] == {"pnpoly/RTX_3090": {"file": "target.parquet", "sha256": sha}}
    assert {label: t["code_digest"] for label, t in record["tuners"].items()} == {
        "reference:random": code_digest("reference:random")["code_digest"],
        "optuna:random": code_digest("optuna:random")["code_digest"]}
    assert record["tuners"]["optuna:random"]["library"] == "optuna"
    assert record["tuners"]["optuna:random"]["library_version"]
    runs = {r["meta"]["run_id"]: r for r in doc["runs"]}
    assert len(record["runs"]) == len(runs) == 2 * 2
    import bat

    for r in record["runs"]:
        run = runs[r["run_id"]]
        assert r["seed"] == run["meta"]["seed"] and r["label"] == run["meta"]["label"]
        assert r["options"] == run["meta"]["spec"]["tuner"]["options"] and r["dataset_sha256"] == sha
        assert r["trace_sha256"] == trace_sha256(run["trace"]) and r["bat_version"] == bat.__version__
        assert r["code_digest"] == record["tuners"][r["label"]]["code_digest"]


def test_the_code_digest_follows_the_tuner_source(tmp_path, monkeypatch) -> None:
    module = tmp_path / "held_tuner.py"
    source = textwrap.dedent("""
        from bat.testing.crippled_tuner import FirstValidTuner

        class Mine(FirstValidTuner):
            STEP = {}
    """)
    module.write_text(source.format(1))
    monkeypatch.syspath_prepend(str(tmp_path))
    first = code_digest("held_tuner:Mine")
    assert set(first["modules"]) >= {"held_tuner", "bat.testing.crippled_tuner", "bat.core.tuner"}
    assert first["modules"]["held_tuner"] == hashlib.sha256(module.read_bytes()).hexdigest()
    module.write_text(source.format(2))  # one byte of the tuner's own source
    assert code_digest("held_tuner:Mine")["code_digest"] != first["code_digest"]
    assert first["library"] is None and first["library_version"] is None


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    text = (captured.out + captured.err).strip()
    assert text.count("\n") == 0, text
    return text


def test_a_data_folder_inside_bats_tree_or_without_data_is_refused(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    assert source_tree() == REPO
    assert _compare(SHIPPED.parent, out) == EXIT_USAGE
    assert "inside BAT's tree" in _one_line(capsys) and not out.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _compare(empty, out) == EXIT_USAGE
    assert "holds no dataset" in _one_line(capsys) and not out.exists()
    assert _compare(tmp_path / "missing", out) == EXIT_USAGE
    assert "not a folder" in _one_line(capsys) and not out.exists()
    held = tmp_path / "held"
    held.mkdir()
    shutil.copyfile(SHIPPED, held / "a.parquet")
    assert _compare(held, out, "--gpus", "RTX_3090") == EXIT_USAGE
    assert "--gpus cannot be used with it" in _one_line(capsys) and not out.exists()
    shutil.copyfile(SHIPPED, held / "b.parquet")
    assert _compare(held, out) == EXIT_USAGE
    assert "two datasets of pnpoly/RTX_3090" in _one_line(capsys) and not out.exists()
    out.mkdir()
    (out / "runs.sqlite").write_bytes(b"")
    (held / "b.parquet").unlink()
    assert _compare(held, out) == EXIT_USAGE
    assert "holds runs already" in _one_line(capsys)


@pytest.fixture()
def site(sealed, tmp_path, capsys) -> Path:
    site = tmp_path / "site"
    assert main(["leaderboard", str(sealed), "--out", str(site), "--key", str(tmp_path / "key.pem")]) == EXIT_OK
    capsys.readouterr()
    return site


@needs_sandbox
def test_the_site_shows_and_signs_the_sealed_digests(sealed, site, capsys) -> None:
    record = json.loads((sealed / "results.json").read_text())["sealed"]
    manifest = json.loads((site / seal.MANIFEST).read_text())
    assert [{k: v for k, v in r.items() if k != "source"} for r in manifest["sealed_runs"]] == record["runs"]
    page = (site / "tuner" / f"{slug('optuna:random')}.html").read_text()
    tuner = record["tuners"]["optuna:random"]
    assert tuner["code_digest"] in page and f"<dt>optuna version</dt><dd>{tuner['library_version']}</dd>" in page
    assert "<dt>isolated (own sandboxed process)</dt><dd>yes</dd>" in page
    target = (site / "target" / f"{slug('pnpoly/RTX_3090')}.html").read_text()
    assert record["datasets"]["pnpoly/RTX_3090"]["sha256"] in target and "target.parquet" in target
    assert main(["leaderboard", "--verify", str(site)]) == EXIT_OK


@needs_sandbox
def test_a_changed_trace_signed_again_is_refused_by_its_recorded_hash(site, tmp_path, capsys) -> None:
    stored = next(site.glob("data/*/results.json"))
    doc = json.loads(stored.read_text())
    doc["runs"][0]["trace"]["best_so_far_ms"][-1] = 1e-9  # a better time than any recorded: a patched timer
    stored.write_text(json.dumps(doc))
    manifest = json.loads((site / seal.MANIFEST).read_text())
    name = stored.relative_to(site).as_posix()
    manifest["files"][name] = seal.digest(stored)  # the cheat re-seals every digest but the run's own
    manifest["sources"][0]["sha256"] = seal.digest(stored)
    signer = seal.read_key(tmp_path / "key.pem")
    assert signer is not None
    data = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()
    (site / seal.MANIFEST).write_bytes(data)
    (site / seal.SIGNATURE).write_text(seal.sign(data, signer) + "\n")
    assert main(["leaderboard", "--verify", str(site)]) == EXIT_FOUND
    line = _one_line(capsys)
    assert line.startswith(f"refused: {name}: ") and "trace_sha256" in line


@needs_sandbox
def test_results_whose_record_disagrees_are_bad_input(sealed, tmp_path, capsys) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    doc = json.loads((sealed / "results.json").read_text())
    doc["sealed"]["runs"][1]["code_digest"] = "0" * 64
    (copy / "results.json").write_text(json.dumps(doc))
    out = tmp_path / "site"
    assert main(["leaderboard", str(copy), "--out", str(out), "--key", str(tmp_path / "k.pem")]) == EXIT_USAGE
    assert "code_digest" in _one_line(capsys) and not out.exists() and not (tmp_path / "k.pem").exists()
