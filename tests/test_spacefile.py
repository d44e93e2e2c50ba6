"""Space files: loader and JSON Schema accept the shipped files and reject the same bad ones."""

import copy
import json
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest

from bat.core.benchmark import benchmark_names, load_benchmark
from bat.core.errors import SpaceSpecError, UnknownNameError
from bat.core.spacefile import load_space

SCHEMA = json.loads(files("bat").joinpath("schemas/space.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

GOOD = {
    "name": "toy",
    "description": "a toy space",
    "parameters": [{"name": "bx", "values": [16, 32, 64]}, {"name": "tx", "values": [1, 2]}],
    "constraints": [{"expr": "bx * tx <= limit", "why": "fits"}],
    "constants": {"limit": 64},
    "problem_size": {"N": 1000},
    "small_problem_size": {"N": 10},
    "launch": {"block": ["bx"], "grid": ["ceil_div(N, bx * tx)", 1]},
    "published": {"cardinality": 6, "constrained": 5, "note": "toy"},
}


def write(tmp_path: Path, raw, name="space.json") -> Path:
    path = tmp_path / name
    path.write_text(raw if isinstance(raw, str) else json.dumps(raw))
    return path


def mutated(edit):
    raw = copy.deepcopy(GOOD)
    edit(raw)
    return raw


def test_schema_is_valid_draft_2020_12():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("name", benchmark_names())
def test_shipped_files_pass_schema_and_loader(name):
    bench = load_benchmark(name)
    assert list(VALIDATOR.iter_errors(bench.raw)) == []
    assert bench.space.cardinality == bench.published["cardinality"]


def test_good_toy_file_loads(tmp_path):
    assert list(VALIDATOR.iter_errors(GOOD)) == []
    bench = load_benchmark(write(tmp_path, GOOD))
    assert bench.space.count_valid() == 5
    assert bench.geometry({"bx": 32, "tx": 2}) == ((16, 1, 1), (32, 1, 1))
    assert bench.geometry({"bx": 16, "tx": 1}, bench.small_problem_size) == ((1, 1, 1), (16, 1, 1))


BAD = {
    "missing parameters": (lambda r: r.pop("parameters"), "$", "missing key 'parameters'"),
    "missing why": (lambda r: r["constraints"][0].pop("why"), "constraints[0]", "'why'"),
    "values not a list": (lambda r: r["parameters"][1].update(values=3),
                          "parameters[1].values", "expected a list"),
    "empty values": (lambda r: r["parameters"][0].update(values=[]),
                     "parameters[0].values", "empty value list"),
    "duplicate value": (lambda r: r["parameters"][0].update(values=[16, 32, 16]),
                        "parameters[0].values[2]", "duplicate value 16"),
    "bool value": (lambda r: r["parameters"][0].update(values=[True, 2]),
                   "parameters[0].values[0]", "expected a number or string"),
    "bad name": (lambda r: r["parameters"][0].update(name="block-x"),
                 "parameters[0].name", "not usable"),
    "unknown top key": (lambda r: r.update(constriants=[]), "constriants", "unknown key"),
    "problem size string": (lambda r: r["problem_size"].update(N="big"),
                            "problem_size.N", "expected a number"),
    "launch without grid": (lambda r: r["launch"].pop("grid"), "launch", "missing key 'grid'"),
    "constraint not object": (lambda r: r["constraints"].append("bx > 1"),
                              "constraints[1]", "expected an object"),
    "variant without note": (lambda r: r["published"].update(variants={"other": {"constraints": [0]}}),
                             "published.variants.other", "missing key 'note'"),
    "variant constraint not object": (
        lambda r: r["published"].update(variants={"other": {"constraints": ["bx > 1"], "note": "x"}}),
        "published.variants.other.constraints[0]", "expected an object"),
}


# JSON Schema cannot say "names unique across the objects of a list" or "an index of that list":
# the loader alone checks them
LOADER_ONLY = {
    "duplicate name": (lambda r: r["parameters"][1].update(name="bx"),
                       "parameters[1].name", "duplicate parameter name"),
    "variant index out of range": (
        lambda r: r["published"].update(variants={"other": {"constraints": [3], "note": "x"}}),
        "published.variants.other.constraints[0]", "no constraint 3 in this file"),
}


def test_a_variant_rebuilds_the_space_under_other_rules():
    from bat.core.spacefile import variant_space

    raw = mutated(lambda r: r["published"].update(variants={"looser": {
        "constraints": [{"expr": "bx * tx <= limit", "why": "another rule"}], "constants": {"limit": 10 ** 9},
        "constrained": 6, "note": "no effective constraint"}}))
    assert list(VALIDATOR.iter_errors(raw)) == []
    other = variant_space(raw, "looser", "toy.json")
    assert other.count_valid() == other.cardinality == 6 and other.constants["limit"] == 10 ** 9
    with pytest.raises(UnknownNameError, match="unknown rule variant of toy 'tighter'; valid: looser"):
        variant_space(raw, "tighter")


@pytest.mark.parametrize("case", sorted(BAD) + sorted(LOADER_ONLY))
def test_malformed_files_rejected_by_schema_and_loader(tmp_path, case):
    edit, json_path, problem = BAD.get(case) or LOADER_ONLY[case]
    raw = mutated(edit)
    if case in BAD:
        assert list(VALIDATOR.iter_errors(raw)), f"schema accepted: {case}"
    path = write(tmp_path, raw)
    with pytest.raises(SpaceSpecError) as info:
        load_benchmark(path)
    message = str(info.value)
    assert str(path) in message and f"{json_path}:" in message and problem in message


@pytest.mark.parametrize(("expr", "token"), [
    ("bx.__class__ == 1", "bx.__class__"),
    ("open('f')", "open"),
    ("bx < nope", "nope"),
])
def test_bad_constraint_names_file_path_and_token(tmp_path, expr, token):
    raw = mutated(lambda r: r["constraints"].append({"expr": expr, "why": "x"}))
    path = write(tmp_path, raw)
    with pytest.raises(SpaceSpecError) as info:
        load_space(path)
    message = str(info.value)
    assert str(path) in message and "constraints[1].expr" in message and f"`{token}`" in message


def test_bad_launch_expression_names_path(tmp_path):
    raw = mutated(lambda r: r["launch"].update(grid=["N // bx", "N.real"]))
    with pytest.raises(SpaceSpecError, match=r"launch\.grid\[1\]: forbidden attribute"):
        load_benchmark(write(tmp_path, raw))


def test_malformed_json_names_file_and_line(tmp_path):
    path = write(tmp_path, '{"name": "toy",\n "parameters": [}')
    with pytest.raises(SpaceSpecError, match=r"space\.json: malformed JSON at line 2"):
        load_space(path)


def test_missing_file(tmp_path):
    with pytest.raises(SpaceSpecError, match="no such space file"):
        load_benchmark(tmp_path / "nothing.json")
