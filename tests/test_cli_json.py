"""``--json``: every command that reports prints one JSON document on stdout, valid under its schema.

The schemas are the repository's ``bat/schemas/cli/<command>.json``; a failing command's
document is ``error.json``'s. Human output, off a terminal, never wraps a path or an id.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from bat.cli import EXIT_FOUND, EXIT_OK, EXIT_USAGE, main

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "bat" / "schemas" / "cli"


def document(args: list[str], capsys, code: int = EXIT_OK) -> dict:
    """Run ``bat ARGS --json``; the one JSON document it printed, checked against its schema."""
    assert main([*args, "--json"]) == code
    captured = capsys.readouterr()
    out = captured.out
    assert (captured.err.startswith("error: ") and captured.err.count("\n") == 1) if code == EXIT_USAGE else True
    assert out.count("\n") == 1, out  # one document, on one line, and nothing else on stdout
    doc = json.loads(out)
    name = "error" if not doc["ok"] else (doc["command"] or "version")
    jsonschema.Draft202012Validator(json.loads((SCHEMAS / f"{name}.json").read_text())).validate(doc)
    assert doc["exit_code"] == code
    return doc


def test_every_schema_is_a_valid_schema():
    names = {p.stem for p in SCHEMAS.glob("*.json")}
    assert {"list", "space", "run", "compare", "analyze", "check", "verify", "import", "export", "inspect", "record",
            "hypertune", "error"} <= names
    for path in SCHEMAS.glob("*.json"):
        jsonschema.Draft202012Validator.check_schema(json.loads(path.read_text()))


def test_list_and_space(capsys):
    doc = document(["list"], capsys)
    assert {"benchmarks", "tuners", "backends", "datasets", "gpus"} <= set(doc)
    assert "gemm" in {b["name"] for b in doc["benchmarks"]}
    assert "shipped/bat2-kerneltuner/gemm_RTX_3090" in {d["id"] for d in doc["datasets"]}
    only = document(["list", "tuners"], capsys)
    assert set(only) == {"command", "ok", "exit_code", "tuners"}
    doc = document(["space", "gemm"], capsys)
    assert doc["spaces"] == [{"benchmark": "gemm", "parameters": 15, "cardinality": 82944, "constrained": 17956,
                              "published_constrained": 17956}]
    assert doc["parameters"][0] == {"name": "MWG", "values": [16, 32, 64, 128]}
    doc = document(["space", "hotspot", "--variant", "kernel_tuner"], capsys)
    assert doc["valid_under_variant"] < doc["valid"]


def test_run(tmp_path, capsys):
    out = tmp_path / "t.parquet"
    doc = document(["run", "-t", "reference:random", "-b", "pnpoly", "-n", "8", "-o", str(out)], capsys)
    assert doc["evaluations"] == 8 and doc["trace"] == str(out) and doc["backend"] == "replay"
    assert doc["best"]["time_ms"] >= doc["best_known_ms"] > 0


def test_compare_and_its_gate(tmp_path, capsys):
    # a declared tuner charge: the time axis (methodology_time) then depends on no clock, so two runs agree
    common = ["-b", "pnpoly", "--gpus", "RTX_3090", "--budgets", "5,10", "-r", "6", "--no-plots",
              "--tuner-charge", "0.001"]
    base = document(["compare", "-t", "mine=bat.tuner_adapters.reference.random_search:RandomSearch", *common,
                     "-o", str(tmp_path / "base")], capsys)
    assert base["gate"] is None and base["executed"] == 6 and "mine" in base["scores"]
    gated = document(["compare", "-t", "mine=bat.testing.crippled_tuner:FirstValidTuner", *common,
                      "-o", str(tmp_path / "now"), "--baseline", base["outputs"]["json"]], capsys, EXIT_FOUND)
    assert not gated["gate"]["passed"] and gated["gate"]["regressed"]
    # bat.compare, the library form: the same campaign, a result under the document's names and with its values
    import bat

    lib = bat.compare(["mine=bat.testing.crippled_tuner:FirstValidTuner"], benchmarks=["pnpoly"], gpus=["RTX_3090"],
                      budgets=[5, 10], repeats=6, plots=False, tuner_charge_s=0.001, out=tmp_path / "lib",
                      baseline=base["outputs"]["json"])
    assert set(lib.document()) == set(gated) - {"command", "ok", "exit_code"}
    assert lib.regressed and lib.executed == gated["executed"] == 12 and set(lib.outputs) == set(gated["outputs"])
    assert (lib.scores, lib.data_flags, lib.gate) == (gated["scores"], gated["data_flags"], gated["gate"])


def test_check_that_flags_exits_3_with_its_document(capsys):
    doc = document(["check", "-b", "pnpoly"], capsys, EXIT_FOUND)
    assert doc["checked"] == 4 and doc["flagged"] == 2
    assert sum(d["flagged"] for d in doc["datasets"]) == 2


def test_export_then_import(tmp_path, capsys):
    out = tmp_path / "p.T4.json"
    doc = document(["export", "pnpoly_RTX_3090", "--to", "t4", "--out", str(out)], capsys)
    assert doc["rows"] > 0 and doc["out"] == str(out)
    imported = document(["import", str(out), "-b", "pnpoly", "--gpu", "MINE", "-o", str(tmp_path / "p.parquet")],
                        capsys)
    (one,) = imported["imported"]
    assert one["rows"] == doc["rows"] and one["gpu"] == "MINE" and one["format"]


@pytest.mark.slow
def test_analyze(tmp_path, capsys):
    doc = document(["analyze", "-b", "pnpoly", "--gpus", "RTX_3090", "--no-importance", "-o", str(tmp_path / "r")],
                   capsys)
    (one,) = doc["benchmarks"]
    assert one["benchmark"] == "pnpoly" and one["max_speedup_over_median"]["RTX_3090"] > 1
    assert Path(doc["report"]).exists()


@pytest.mark.slow
def test_verify(capsys):
    doc = document(["verify", "-b", "pnpoly", "--first", "--no-gate"], capsys)
    (one,) = doc["configurations"]
    assert one["ok"] and one["status"] == "ok" and doc["failed"] == 0


def test_an_error_is_a_json_document_too(capsys):
    doc = document(["run", "-t", "nope", "-b", "gemm"], capsys, EXIT_USAGE)
    assert doc["command"] == "run" and "unknown tuner 'nope'" in doc["error"]


def test_version(capsys):
    assert document(["--version"], capsys)["version"]


def test_human_output_off_a_terminal_wraps_no_id_or_path(capsys, tmp_path):
    assert main(["list", "datasets"]) == EXIT_OK
    lines = capsys.readouterr().out.splitlines()
    for ident in ("shipped/bat2-kerneltuner/convolution_RTX_3060_laptop",
                  "shipped/benchmark-hub/dedispersion_milo_A100"):
        assert any(ident in line for line in lines), ident
    long = "x" * 150
    blocker = tmp_path / "a-file"  # a folder under a file cannot be made, not even by root
    blocker.write_text("")
    out = blocker / "runs" / f"{long}.parquet"
    assert main(["run", "-t", "reference:random", "-b", "pnpoly", "-n", "2", "-o", str(out)]) == EXIT_USAGE
    assert long in capsys.readouterr().err and blocker.read_text() == ""


def test_inspect_and_serve(capsys):
    doc = document(["inspect", "-b", "pnpoly", "--random"], capsys)
    assert doc["resources"]["registers"] > 0 and doc["arch"]
    assert main(["serve", "-b", "gemm", "--json"]) == EXIT_USAGE  # stdout is the protocol's: refused, and silent
    captured = capsys.readouterr()
    assert captured.out == "" and "--json" in captured.err


def test_hypertune(tmp_path, capsys):
    args = ["hypertune", "-t", "reference:genetic", "--params", "population", "--settings", "2", "--budget", "10",
            "-r", "2", "--final-repeats", "2", "--train", "pnpoly_RTX_3090,pnpoly_RTX_2080_Ti",
            "--heldout", "pnpoly_RTX_Titan", "--no-report", "-o", str(tmp_path / "ht")]
    doc = document(args, capsys)
    assert doc["units_run"] > 0 and (tmp_path / "ht" / "best-options.json").is_file()
    assert set(doc["final"]) == {"train", "heldout", "generalisation_gap"}


def test_the_readme_names_every_command_with_a_schema():
    readme = (ROOT / "README.md").read_text()
    paragraph = readme[readme.index("`--json` (anywhere"):].split("\n\n")[0]
    named = set(re.findall(r"`(\w+)`", paragraph))
    assert {p.stem for p in SCHEMAS.glob("*.json")} - {"error", "version"} <= named


@pytest.mark.slow
def test_verify_of_an_infinite_error_is_a_finding_in_a_strict_document(tmp_path: Path, capsys):
    """A poisoned output (an infinity written) gives an infinite error ratio: exit 3 and a document that any
    strict JSON parser reads, the infinity as null and named in non_finite."""
    source = (ROOT / "benchmarks" / "nbody" / "kernel.cu").read_text()
    assert source.count("pi[k].x + v.x * dt,") == 1
    poisoned = tmp_path / "nbody_inf.cu"
    poisoned.write_text(source.replace("pi[k].x + v.x * dt,", "pi[k].x + v.x * dt + INFINITY,"))
    doc = document(["verify", "-b", "nbody", "--first", "--no-gate", "--source", str(poisoned)], capsys, EXIT_FOUND)
    (one,) = doc["configurations"]
    assert one["status"] == "incorrect" and one["error_ratio"] is None and "got inf" in one["message"]
    assert doc["non_finite"] == {"/configurations/0/error_ratio": "inf"}


def test_a_document_holds_only_finite_numbers():
    import numpy as np

    from bat.core.jsonout import dumps, finite

    doc = {"a": [1.0, float("nan"), np.float64("-inf")], "b/c": {"d~": np.inf}, "e": np.arange(2)}
    text = dumps(doc)
    back = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in a strict document"))
    assert back["a"] == [1.0, None, None] and back["e"] == [0, 1]
    assert back["non_finite"] == {"/a/1": "nan", "/a/2": "-inf", "/b~1c/d~0": "inf"}
    assert finite([1, 2.5])[1] == {}
