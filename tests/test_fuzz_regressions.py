"""Every failure the fuzzer of issue 32 found (tests/fuzz_harness.py, bench/fuzz_bench.py), kept as a case that
goes through the same property: exit 2 with one line naming the culprit, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bad_input_builders import PNPOLY_DATA
from fuzz_harness import cache_base, dataset_meta_base, ktt_base, run_cli, t4_base

from bat.core.datasetmeta import _META_TYPES, DatasetMeta
from bat.core.errors import DatasetError


def _cache(change) -> bytes:
    raw = cache_base()
    change(raw)
    return json.dumps(raw).encode()


def _first(raw: dict) -> dict:
    return next(iter(raw["cache"].values()))


#: (id, file name, content): found by bench/fuzz_bench.py on the 2-core box (internal errors before the fix)
FOUND = [
    ("cache-parameter-value-list", "c.json", _cache(lambda r: _first(r).update(between_method=[]))),
    ("cache-tune-params-int", "c.json", _cache(lambda r: r.update(tune_params=1))),
    ("cache-tune-params-value-not-list", "c.json", _cache(lambda r: r["tune_params"].update(tile_size=3))),
    ("cache-field-mixes-kinds", "c.json", _cache(lambda r: _first(r).update(verification_time=True))),
    ("cache-empty", "c.json", _cache(lambda r: r.update(cache={}))),
    ("cache-device-name-list", "c.json", _cache(lambda r: r.update(device_name=["x"]))),
    ("t4-times-null", "t.json", json.dumps(t4_base() | {"results": [dict(t4_base()["results"][0], times=None)]})
     .encode()),
    ("t4-objectives-object", "t.json", json.dumps(t4_base() | {"results": [dict(t4_base()["results"][0],
                                                                              objectives={"a": 1})]}).encode()),
]


def _ktt(change) -> bytes:
    raw = ktt_base()
    change(raw["Results"][0])
    return json.dumps(raw).encode()


def _repeat_parameter(result: dict) -> None:
    result["Configuration"].append(dict(result["Configuration"][1]))


def _counter_named_status(result: dict) -> None:
    counters = result["ComputationResults"][0]["ProfilingData"]["Counters"]
    counters.append(dict(counters[0], Name="status"))


def _ktt_header(change) -> bytes:
    raw = ktt_base()
    change(raw["Metadata"])
    return json.dumps(raw).encode()


#: (id, file name, content) of KTT files (benchmark coulomb), found by bench/fuzz_bench.py on 2026-11-25 (internal
#: errors, or a dataset written that could not be read back), with neighbours found by hand (marked "hand")
FOUND_KTT = [
    ("ktt-parameter-named-twice", "k.json", _ktt(_repeat_parameter)),
    ("ktt-counter-named-like-a-column-hand", "k.json", _ktt(_counter_named_status)),
    ("ktt-global-size-beyond-64-bits", "k.json",
     _ktt(lambda r: r["ComputationResults"][0]["GlobalSize"].update(X=10**25))),
    ("ktt-registers-beyond-64-bits-hand", "k.json",
     _ktt(lambda r: r["ComputationResults"][0]["CompilationData"].update(RegistersCount=10**25))),
    ("ktt-metadata-infinity", "k.json", _ktt_header(lambda m: m.update(ComputeApi=float("inf")))),
    ("ktt-metadata-nan-hand", "k.json", _ktt_header(lambda m: m.update(Platform=float("nan")))),
]


@pytest.mark.parametrize(("name", "content"), [(n, c) for _, n, c in FOUND], ids=[i for i, _, _ in FOUND])
def test_a_found_input_is_refused_in_one_line(name: str, content: bytes, tmp_path: Path) -> None:
    assert run_cli(tmp_path, {name: content}, ["import", name, "-b", "pnpoly", "-o", "d.parquet"]) == 2


@pytest.mark.parametrize(("name", "content"), [(n, c) for _, n, c in FOUND_KTT], ids=[i for i, _, _ in FOUND_KTT])
def test_a_found_ktt_input_is_refused_in_one_line(name: str, content: bytes, tmp_path: Path) -> None:
    assert run_cli(tmp_path, {name: content}, ["import", name, "-b", "coulomb", "-o", "d.parquet"]) == 2


def test_a_parameter_named_like_a_column_is_refused_by_every_importer() -> None:
    from bat.core.dataset import make_frame

    for names in (["x", "x"], ["status"], ["objective_ms", "y"]):
        with pytest.raises(DatasetError, match="one name, one column"):
            make_frame(names, [], "f.json")


@pytest.mark.parametrize(("key", "value"), [("space_file", None), ("benchmark", 5), ("partial", "yes"),
                                            ("n_expected", True), ("space", [1]), ("extra", [])])
def test_dataset_metadata_of_the_wrong_type_is_refused(key: str, value) -> None:
    meta = dataset_meta_base() | {key: value}
    with pytest.raises(DatasetError, match=key):
        DatasetMeta.from_json(json.dumps(meta), "m.parquet")


def test_every_metadata_field_has_its_type() -> None:
    assert set(_META_TYPES) == set(DatasetMeta.__dataclass_fields__)


@pytest.mark.parametrize("lines", [[b"null", b"null", b'{"type": "done"}'], [b'{"type": "done"}'],
                                   [b'{"type": "prior", "gpu": "X", "offset": 0}']],
                         ids=["done-after-junk", "done-first", "prior-first"])
def test_protocol_lines_before_a_hello(lines: list[bytes], tmp_path: Path) -> None:
    """Found by the CI fuzzer after protocol 2 (the version check ran before any hello: KeyError 'done')."""
    from fuzz_harness import _check_protocol

    _check_protocol(lines, tmp_path)


HYPERTUNE = ["hypertune", "-t", "reference:genetic", "-n", "1", "--split", "gpus:RTX_3090", "--pool",
             "pnpoly_RTX_3090,pnpoly_RTX_Titan", "-o", "hx"]


@pytest.mark.parametrize("argv", [
    ["compare", "-t", "reference:random", "-b", "pnpoly", "-o", "cmp", "--budgets", "100001"],
    ["compare", "-t", "reference:random", "-b", "pnpoly", "-o", "cmp", "--budgets", "5", "--repeats", "9999999"],
    [*HYPERTUNE, "--budget", "100001"], [*HYPERTUNE, "--repeats", "9999999"],
    [*HYPERTUNE, "--final-repeats", "9999999"]],
    ids=["compare-budget", "compare-repeats", "hypertune-budget", "hypertune-repeats", "hypertune-final-repeats"])
def test_a_comparison_too_large_is_refused_before_it_is_planned(argv: list[str], tmp_path: Path) -> None:
    """Found by the 100,000-example options bench (2026-11-26): ``compare --budgets 9999999`` ran past two
    minutes and grew to 12 GB, ``--repeats 9999999`` to 2.9 GB in two minutes; ``hypertune`` refused such
    inner comparisons only after writing its unit store. All are refused up front now, nothing written
    (``run_cli`` also holds what the refusal adds to peak memory under ``MEMORY_GROWTH_LIMIT_MB``)."""
    assert run_cli(tmp_path, {}, argv) == 2


def test_a_budget_beyond_the_space_scores_both_axes() -> None:
    """The same bench: ``--budgets 1000000`` on pnpoly (4,092 configurations) ended in an internal error, the
    time axis's window lying wholly past the point where random search holds the optimum. The time window
    ends where the evaluation window does, at the space's size; the random-search band past it is its last
    row, computed once."""
    from bat.analysis.compare.methodology import target_parts
    from bat.analysis.compare.plots import random_bands
    from bat.campaign.design import Campaign, TunerSpec

    small, large = (Campaign(tuners=(TunerSpec.parse("reference:random"),), targets=(("pnpoly", "RTX_3090"),),
                             budgets=(b,), repeats=1) for b in (4092, 100_000))
    _, base, *_, seconds, _ = target_parts(large, "pnpoly", "RTX_3090", 0.05)
    assert len(base.values) == 4092 and seconds == pytest.approx(4092 * base.mean_cost)
    band, whole = random_bands(large)[("pnpoly", "RTX_3090")], random_bands(small)[("pnpoly", "RTX_3090")]
    assert band.shape == (100_000, 3) and (band[:4092] == whole).all() and (band[4092:] == whole[-1]).all()


def test_a_dataset_without_parameters_loads(tmp_path: Path) -> None:
    """Found by the fuzzer after issue 43's read-time quarantine: ``bat_parameters`` of ``[]`` reached pandas'
    duplicate check with an empty subset (a ValueError)."""
    import pyarrow.parquet as pq

    from bat.core.dataset import Dataset

    table = pq.read_table(PNPOLY_DATA)
    meta = dict(table.schema.metadata)
    meta[b"bat_parameters"] = b"[]"
    pq.write_table(table.replace_schema_metadata(meta), tmp_path / "d.parquet")
    assert Dataset.load(tmp_path / "d.parquet").parameters == ()
