"""T1 search-space files: the public ones read with their constraints, the whitelist, and export that
the pinned Kernel Tuner accepts for every shipped space."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bat.cli import main
from bat.core.benchmark import benchmark_from_dict, benchmark_names, load_benchmark
from bat.core.errors import SpaceSpecError
from bat.core.t1 import space_to_t1, t1_to_space, t1_values, translate_condition, write_t1

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "t1"


def _t1(params: list[dict], conditions: list[str] = (), **extra) -> dict:
    return {"ConfigurationSpace": {"TuningParameters": params,
                                   "Conditions": [{"Expression": c, "Parameters": []} for c in conditions]},
            "KernelSpecification": {"Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu",
                                    "GlobalSize": {"X": "1"}, "LocalSize": {"X": "1"}}, **extra}


@pytest.mark.parametrize(("name", "cardinality", "valid"), [("gemm_milo", 663_552, 116_928),
                                                             ("hotspot_milo", 4_440_000, 82_984)])
def test_public_t1_files_give_kernel_tuners_valid_counts(name, cardinality, valid):
    """PROVENANCE.md: python-constraint2 (Kernel Tuner's solver) finds these counts on the files' Conditions."""
    bench = load_benchmark(FIXTURES / f"{name}.T1.json")
    assert bench.name == name
    assert bench.space.cardinality == cardinality
    assert bench.space.count_valid() == valid
    assert bench.kernel["t1"]["KernelSpecification"]["KernelName"] in ("Xgemm", "calculate_temp")
    sizes = bench.kernel["t1"]["KernelSpecification"]["ProblemSize"]
    assert list(bench.problem_size.values()) == sizes
    assert list(bench.problem_size) == ["problem_size_x", "problem_size_y", "problem_size_z"][:len(sizes)]


def test_values_strings_of_files_in_the_wild():
    where = "f: TuningParameters[0]"
    assert t1_values("[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))", "int", where)[:7] == [1, 2, 4, 8, 16, 32, 64]
    assert t1_values("[2**i for i in range(0, 6)]", "int", where) == [1, 2, 4, 8, 16, 32]
    assert t1_values("[i for i in range(1, 11) if i % 2 == 0]", "int", where) == [2, 4, 6, 8, 10]
    assert t1_values("[0.5, 1]", "float", where) == [0.5, 1.0]
    assert t1_values("['a', 'b'] + ['a']", "string", where) == ["a", "b"]
    assert t1_values([1, 2], "int", where) == [1, 2]
    assert t1_values("[True, False]", "bool", where) == [1, 0]


@pytest.mark.parametrize("text", ["__import__('os').system('true')", "[x.real for x in range(3)]",
                                  "(lambda: [1])()", "range(10**9)", "[i for i in range(3) for j in range(2)]",
                                  "{1, 2}", "[1, 2][0]"])
def test_values_that_would_run_code_are_refused(text):
    with pytest.raises(SpaceSpecError, match=r"TuningParameters\[0\]\.Values"):
        t1_values(text, "int", "f: TuningParameters[0]")


def test_values_of_the_wrong_type_name_the_parameter():
    with pytest.raises(SpaceSpecError, match=r"p\.Values: 1.5 is not of type int"):
        t1_values("[1, 1.5]", "int", "p")
    with pytest.raises(SpaceSpecError, match="Type: 'complex' unknown"):
        t1_values("[1]", "complex", "p")


def test_conditions_are_translated_or_refused_with_the_token():
    names = ["a", "b"]
    assert translate_condition("a in [1, 2] and b not in (3,)", names, "c") == "(a == 1 or a == 2) and b != 3"
    assert translate_condition("(a > 1) == True", names, "c") == "(a > 1) == 1"
    with pytest.raises(SpaceSpecError, match=r"Conditions\[4\].Expression: forbidden call of `int`"):
        translate_condition("int(a / b) > 1", names, "f: Conditions[4].Expression")
    with pytest.raises(SpaceSpecError, match="unknown name `c`"):
        translate_condition("a < c", names, "f: Conditions[0].Expression")
    with pytest.raises(SpaceSpecError, match=r"forbidden call of `math\.ceil`"):
        translate_condition("math.ceil(a) > 1", names, "w")
    with pytest.raises(SpaceSpecError, match=r"forbidden attribute access `a\.real`"):
        translate_condition("a.real > 1", names, "w")


def test_kernel_tuners_implicit_block_limit_becomes_a_constraint():
    raw = _t1([{"Name": "block_size_x", "Type": "int", "Values": "[256, 512, 1024]"},
               {"Name": "block_size_y", "Type": "int", "Values": "[1, 2]"}])
    space = benchmark_from_dict(t1_to_space(raw, "x.T1.json", "x"), Path("x.T1.json")).space
    assert space.constraints[-1].expr == "block_size_x * block_size_y <= 1024"
    assert space.count_valid() == 5
    small = _t1([{"Name": "block_size_x", "Type": "int", "Values": "[32, 64]"}])
    assert t1_to_space(small, "s", "s")["constraints"] == []


def test_t1_round_trip_keeps_parameters_and_constraints():
    first = t1_to_space(json.loads((FIXTURES / "gemm_milo.T1.json").read_text()), "g", "gemm_milo")
    again = t1_to_space(space_to_t1(first), "g2", "gemm_milo")
    assert again["parameters"] == first["parameters"]
    assert [c["expr"] for c in again["constraints"]] == [c["expr"] for c in first["constraints"]]
    assert again["kernel"]["t1"]["KernelSpecification"] == first["kernel"]["t1"]["KernelSpecification"]


def test_bat_space_and_import_read_a_t1_file(capsys, tmp_path):
    path = FIXTURES / "hotspot_milo.T1.json"
    assert main(["space", str(path)]) == 0
    out = capsys.readouterr().out
    assert "hotspot_milo" in out and "82,984" in out and "4,440,000" in out
    assert main(["import", str(path)]) == 0
    out = capsys.readouterr().out
    assert "82,984 valid" in out
    written = json.loads((Path(out.split("-> ")[-1].strip().replace("\n", ""))).read_text())
    assert written["name"] == "hotspot_milo" and len(written["constraints"]) == 5


def _reduced(raw: dict, limit: int = 150_000) -> dict:
    """The same constraints on every other value of the longest lists, until the product is <= limit."""
    raw = json.loads(json.dumps(raw))
    params = raw["parameters"]
    while int(np.prod([len(p["values"]) for p in params])) > limit:
        longest = max(params, key=lambda p: len(p["values"]))
        longest["values"] = longest["values"][::2]
    return raw


@pytest.mark.parametrize("name", benchmark_names())
def test_every_shipped_space_exports_to_t1_that_kernel_tuner_accepts(name, tmp_path):
    """Kernel Tuner's own schema check and solver: the same valid configurations as BAT's constraints.

    Spaces over 150,000 configurations are checked on a subset of their values (the full
    dedispersion space takes Kernel Tuner's solver minutes and gigabytes); the constraints are the
    exported ones either way.
    """
    pytest.importorskip("kernel_tuner")
    from kernel_tuner.file_utils import get_input_file
    from kernel_tuner.searchspace import Searchspace

    bench = load_benchmark(name)
    raw = _reduced(bench.raw)
    out = write_t1(raw, bench.directory, tmp_path / f"{name}.T1.json")
    doc = get_input_file(out)  # jsonschema against Kernel Tuner's T1 schema
    kernel_file = doc["KernelSpecification"]["KernelFile"]
    if bench.kernel.get("source"):
        assert (out.parent / kernel_file).resolve() == (bench.directory / bench.kernel["source"]).resolve()
    # Kernel Tuner reads Values with eval (our own output, in a test); its solver applies the Conditions
    tune_params = {p["Name"]: eval(p["Values"]) for p in doc["ConfigurationSpace"]["TuningParameters"]}
    restrictions = [c["Expression"] for c in doc["ConfigurationSpace"]["Conditions"]]
    kt = Searchspace(tune_params, restrictions, 1 << 30)
    ours = benchmark_from_dict(raw, bench.path).space
    assert kt.size == ours.count_valid()
    valid = ours.decode(ours.from_ids(ours.valid_ids()))
    assert {tuple(c) for c in kt.list} == {tuple(c) for c in valid.itertuples(index=False)}
    back = load_benchmark(out).space  # and BAT reads its own export back
    assert back.count_valid() == ours.count_valid()


@pytest.mark.parametrize("name", ["pnpoly", "gemm"])
def test_tune_kernel_t1_runs_on_the_export_with_a_cache_of_the_shipped_data(name, tmp_path):
    """The whole of Kernel Tuner's T1 path, in its simulation mode (no GPU): it tunes the exported space."""
    pytest.importorskip("kernel_tuner")
    from kernel_tuner import tune_kernel_T1

    from bat.core.dataset import Dataset
    from bat.formats.kerneltuner import to_cache
    from bat.registry import find_dataset

    bench = load_benchmark(name)
    out = write_t1(bench.raw, bench.directory, tmp_path / f"{name}.T1.json")
    spec = json.loads(out.read_text())["KernelSpecification"]
    dataset = Dataset.load(find_dataset(name).path)
    cache = {**to_cache(dataset), "kernel_name": spec["KernelName"], "problem_size": spec["ProblemSize"]}
    (tmp_path / "cache.json").write_text(json.dumps(cache))
    _, results = tune_kernel_T1(out, cache_filepath=tmp_path / "cache.json", simulation_mode=True, device=0,
                                strategy="random_sample", strategy_options={"max_fevals": 15})
    assert len(results["results"]) == 15
    for r in results["results"]:
        row = dataset.row_of(r["configuration"])
        assert row is not None and bench.space.is_valid(bench.space.index(r["configuration"])[None, :])[0]
        if r["invalidity"] == "correct":
            assert r["measurements"][0]["value"] == pytest.approx(dataset.frame["objective_ms"].iloc[row])


def test_bat_export_to_t1_from_a_benchmark_and_from_a_dataset(tmp_path, capsys):
    assert main(["export", "hotspot", "--to", "t1", "--out", str(tmp_path / "h.T1.json")]) == 0
    doc = json.loads((tmp_path / "h.T1.json").read_text())
    assert doc["BenchmarkConfig"]["max_shared_bytes"] == 49152
    assert any("<= 49152" in c["Expression"] for c in doc["ConfigurationSpace"]["Conditions"])
    assert main(["export", "shipped/bat2-kerneltuner/pnpoly_RTX_Titan", "--to", "t1",
                 "--out", str(tmp_path / "p.T1.json")]) == 0
    assert load_benchmark(tmp_path / "p.T1.json").space.count_valid() == load_benchmark("pnpoly").space.count_valid()
    assert "as T1" in capsys.readouterr().out
