"""Files of other frameworks and older space versions imported into a benchmark: names mapped, slices fixed.

Fixtures: excerpts of the FAIR Benchmark Hub's KTT output and older convolution_milo cache
(tests/fixtures/benchmark_hub/extra, PROVENANCE.md beside them)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from bat.cli import main
from bat.core.dataset import Dataset
from bat.core.errors import SpaceMismatchError, SpaceSpecError
from bat.core.spacefile import space_from_dict
from bat.formats.importing import import_file

EXTRA = Path(__file__).parent / "fixtures" / "benchmark_hub" / "extra"
KTT_CONV = EXTRA / "KTConvolutionOutput_2080Ti.json.gz"
KTT_PNPOLY = EXTRA / "KTPnpolyOutput_2080Ti.json.gz"
OLDER = EXTRA / "convolution_milo_a4000_older_space.json.gz"


def _ktt_config(result: dict) -> dict:
    return {p["Name"]: p["Value"] for p in result["Configuration"]}


def _rewritten(path: Path, tmp_path: Path, change) -> Path:
    raw = json.loads(gzip.decompress(path.read_bytes()))
    change(raw)
    out = tmp_path / path.name.removesuffix(".gz")
    out.write_text(json.dumps(raw))
    return out


def test_ktt_convolution_joins_the_benchmark_row_for_row():
    raw = json.loads(gzip.decompress(KTT_CONV.read_bytes()))
    imp = import_file(KTT_CONV, benchmark="convolution")
    frame = imp.dataset.frame
    assert imp.dataset.meta.benchmark == "convolution" and imp.dataset.meta.gpu == "RTX_2080_Ti"
    assert list(imp.dataset.parameters) == list(imp.space.names)
    for row, result in zip(frame.to_dict("records"), raw["Results"], strict=True):
        cfg = _ktt_config(result)
        assert (row["block_size_x"], row["tile_size_y"], row["use_padding"], row["read_only"]) == \
            (cfg["BLOCK_SIZE_X"], cfg["TILE_SIZE_Y"], cfg["PADDING"], cfg["READ_ONLY"])
        assert row["filter_width"] == row["filter_height"] == 2 * cfg["HFS"] + 1 == 15
    assert not {"BLOCK_SIZE_X", "HFS", "IMAGE_WIDTH"} & set(frame.columns)
    assert imp.mapping is not None and imp.mapping.checked == {"image_width": "IMAGE_WIDTH",
                                                               "image_height": "IMAGE_HEIGHT"}
    assert not imp.dataset.meta.partial and imp.n_constraint_violations == 0


def test_ktt_pnpoly_maps_vertices_to_the_problem_size():
    imp = import_file(KTT_PNPOLY, benchmark="pnpoly")
    assert imp.mapping.checked == {"n_vertices": "VERTICES"}
    assert set(imp.dataset.parameters) == {"between_method", "block_size_x", "tile_size", "use_method"}


def test_another_problem_size_is_refused_naming_row_and_key(tmp_path):
    def wider(raw):
        raw["Results"][3]["Configuration"][5]["Value"] = 2048  # IMAGE_WIDTH of the fourth result

    with pytest.raises(SpaceMismatchError, match=r"IMAGE_WIDTH is 2048 in row 3, .* image_width is 4096"):
        import_file(_rewritten(KTT_CONV, tmp_path, wider), benchmark="convolution")


def test_a_name_nobody_maps_is_named_in_one_line(tmp_path):
    def extra(raw):
        for result in raw["Results"]:
            result["Configuration"].append({"Name": "UNROLL", "Value": 1, "ValueType": "UnsignedInt"})

    with pytest.raises(SpaceMismatchError, match="cannot map the file's parameter UNROLL onto benchmark "
                                                 "convolution") as err:
        import_file(_rewritten(KTT_CONV, tmp_path, extra), benchmark="convolution")
    assert "\n" not in str(err.value)


def test_without_a_declaration_names_match_ignoring_case(tmp_path):
    def upper(raw):
        for result in raw["Results"]:
            for p in result["Configuration"]:
                p["Name"] = p["Name"].lower().upper()
    space = json.loads((Path(__file__).parents[1] / "benchmarks" / "pnpoly" / "space.json").read_text())
    del space["other_names"]
    space_file = tmp_path / "pnpoly_plain.json"
    space_file.write_text(json.dumps(space))
    with pytest.raises(SpaceMismatchError, match="cannot map the file's parameter VERTICES .* "
                                                 r"\(VERTICES is 600 in every row, as n_vertices\)$"):
        import_file(_rewritten(KTT_PNPOLY, tmp_path, upper), benchmark=str(space_file))
    space["problem_size"]["vertices"] = space["problem_size"].pop("n_vertices")
    space.pop("small_problem_size"), space.pop("emulation_problem_size"), space.pop("launch")
    space_file.write_text(json.dumps(space))
    imp = import_file(_rewritten(KTT_PNPOLY, tmp_path, upper), benchmark=str(space_file))
    assert imp.mapping.declared == "names matched ignoring case"
    assert imp.mapping.renamed["tile_size"] == "TILE_SIZE" and imp.mapping.checked == {"vertices": "VERTICES"}


def test_an_older_space_imports_as_a_slice_only_with_fix():
    with pytest.raises(SpaceMismatchError, match=r"lacks parameter use_shmem .* --fix use_shmem=VALUE"):
        import_file(OLDER, benchmark="convolution_milo")
    imp = import_file(OLDER, benchmark="convolution_milo", fix={"use_shmem": "1"})
    meta = imp.dataset.meta
    assert meta.partial and imp.mapping.is_slice
    assert imp.mapping.fixed == {"use_shmem": 1, "use_cmem": 1, "filter_height": 15, "filter_width": 15}
    assert imp.mapping.fixed_how["use_shmem"] == "--fix" and imp.mapping.fixed_how["use_cmem"] == "its only value"
    assert meta.extra["mapping"]["fixed"]["use_shmem"] == 1
    assert set(imp.dataset.frame["use_shmem"]) == {1}
    assert meta.space_hash == imp.space.space_hash  # the benchmark's own space: replay, priors and analyses use it


@pytest.mark.parametrize(("fix", "message"), [
    ({"use_shmem": "2"}, r"--fix use_shmem=2: not one of the values \[0, 1\]"),
    ({"shmem": "1"}, "--fix shmem: not a parameter of convolution_milo"),
    ({"use_shmem": "1", "block_size_x": "16"}, "--fix block_size_x: the file has this parameter"),
])
def test_bad_fixes_are_refused(fix, message):
    with pytest.raises(SpaceMismatchError, match=message):
        import_file(OLDER, benchmark="convolution_milo", fix=fix)


def test_the_command_says_how_and_writes_a_partial_slice(tmp_path, capsys):
    out = tmp_path / "older.parquet"
    assert main(["import", str(OLDER), "--benchmark", "convolution_milo", "--gpu", "A4000", "-o", str(out),
                 "--fix", "use_shmem=1"]) == 0
    printed = capsys.readouterr().out
    assert "a slice of the space, parameters the file lacks fixed: use_shmem = 1 (--fix)" in printed
    assert Dataset.load(out).meta.partial
    assert main(["import", str(KTT_CONV), "--benchmark", "convolution", "-o", str(tmp_path / "k.parquet")]) == 0
    assert "filter_height = 2 * HFS + 1" in capsys.readouterr().out
    assert main(["import", str(OLDER), "-b", "convolution_milo", "--fix", "use_shmem", "-o",
                 str(tmp_path / "x.parquet")]) == 2
    assert "--fix 'use_shmem': expected NAME=VALUE" in capsys.readouterr().err
    assert not (tmp_path / "x.parquet").exists()


def test_the_space_file_checks_other_names():
    base = {"name": "t", "parameters": [{"name": "a", "values": [1, 2]}], "constraints": [],
            "problem_size": {"n": 4}}
    space_from_dict({**base, "other_names": {"ktt": {"a": "A", "n": "N"}}})
    with pytest.raises(SpaceSpecError, match=r"other_names.ktt.b: neither a parameter nor a problem_size key"):
        space_from_dict({**base, "other_names": {"ktt": {"b": "B"}}})
    with pytest.raises(SpaceSpecError, match=r"other_names\.ktt\.a: expected an expression"):
        space_from_dict({**base, "other_names": {"ktt": {"a": 3}}})


def test_a_slice_works_in_replay_analyses_and_the_transfer_study(tmp_path, capsys):
    from bat.analysis.compare.transfer import gpus_of_space
    from bat.core.benchmark import load_benchmark
    from bat.core.trace import read_trace
    from bat.data.checks import check_dataset
    from bat.registry import find_dataset
    from bat.run.targets import replay_target, with_prior

    assert main(["import", str(OLDER), "-b", "convolution_milo", "--gpu", "A4000_2023", "--fix", "use_shmem=1"]) == 0
    assert "the slice it covers (use_shmem = 1) has" in capsys.readouterr().out
    whole = load_benchmark("convolution_milo").space
    data = Dataset.load(find_dataset("convolution_milo", "A4000_2023").path)
    assert data.meta.slice == {"use_shmem": 1}
    target = replay_target("convolution_milo", "A4000_2023")
    assert target.space.whole is whole or target.space.whole.space_hash == whole.space_hash
    assert target.space.parameters[target.space.names.index("use_shmem")].values == (1,)
    assert target.space.count_valid() < whole.count_valid()
    assert not check_dataset(data, target.space).flagged
    # the transfer study: a GPU of the benchmark's space, and a target that takes the other GPUs as its prior
    assert "A4000_2023" in gpus_of_space("convolution_milo")
    a100 = Dataset.load(find_dataset("convolution_milo", "A100").path)
    assert with_prior(target, {"A100": a100}).facts.others["A100"] is a100
    out = tmp_path / "trace.parquet"
    assert main(["run", "--tuner", "reference:random", "--dataset", "convolution_milo_A4000_2023", "--budget", "12",
                 "--out", str(out)]) == 0
    assert "only that slice is searched" in capsys.readouterr().out
    trace, _ = read_trace(out)
    assert set(trace["use_shmem"]) == {1} and len(trace) >= 12
    report = tmp_path / "report"
    assert main(["analyze", "--dataset", "convolution_milo_A4000_2023", "--no-importance", "--format", "png",
                 "--out", str(report)]) == 0
    assert "A4000_2023" in (report / "report.md").read_text()
