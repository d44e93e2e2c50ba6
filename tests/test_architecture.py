"""The dependency rules of docs/DESIGN.md, checked on the real import graph (grimp) of the ``bat`` namespace.

A layer is a folder of ``bat/``: a module's layer is where it is placed, so a
new module is checked by its folder, and a module placed directly in ``bat/``
(outside every layer folder) fails. Layers, lowest first; a module may import
its own layer and the ones its rule allows, nothing else:

- core (``bat/core``): spaces, expressions, benchmarks, datasets, the problem,
  traces, the tuner and kernel-runner contracts, errors and file primitives;
- formats (``bat/formats``): other tools' files (T1, Kernel Tuner, T4, KTT);
- toolchain (``bat/toolchain``): NVRTC, compile pools, ptxas parsing, ncu;
- backends (``bat/backends``): replay, command, live, emulated;
- registry (``bat/registry.py``): tuners, backends and datasets by name;
- data (``bat/data``): the data checks of a dataset against its peers;
- testing (``bat/testing``): the tuner battery;
- protocol (``bat/protocol``): the ask/tell protocol, its server and clients;
- run (``bat/run``): targets, the run driver (which checks a replayed
  dataset with the data checks), recording;
- campaign (``bat/campaign``): the campaign engine (design, execution on
  pools or Dask, the run store), on the run wiring;
- tuner_adapters, benchmarks, analysis (``bat.<name>``, mapped by
  pyproject.toml from the top-level folders of the same name); the comparison
  (``bat/analysis/compare``) and the hypertune (``bat/analysis/hypertune``)
  run campaigns;
- leaderboard (``bat/leaderboard``): the signed site of ``bat leaderboard``,
  drawn from compare results with the analyses' figure style;
- cli and the public facade (``bat/__init__``): anything.

The core imports no tuning, analysis or device library. No import cycle
exists anywhere. Across layers only public names are imported. Nothing
imports the top-level folders by their own names (``analysis.x``): that would
load a second copy of a module beside ``bat.analysis.x``. The rules are data
(``ALLOWED``, ``FORBIDDEN_EXTERNAL``); the last tests feed them violations to
show each is caught.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from import_contracts import lint_imports
from package_map import ROOT, declared_packages, folder_of, folders_with_files, modules, package_dirs, static_tree
from test_repository import tracked_files

#: top-level folders of the repository that pyproject.toml maps into the namespace as bat.<name>
MAPPED = tuple(folder for name, folder in package_dirs().items() if name != "bat")

#: layer -> layers it may import (a layer is a folder of bat/; "analysis/compare" is nested)
ALLOWED: dict[str, frozenset[str]] = {
    "core": frozenset({"core"}),
    "formats": frozenset({"core", "formats"}),
    "toolchain": frozenset({"core", "toolchain"}),
    "backends": frozenset({"core", "toolchain", "backends"}),
    "registry": frozenset({"core", "registry"}),
    "data": frozenset({"core", "registry", "data"}),
    "testing": frozenset({"core", "registry", "testing"}),  # registry: an exploit loads data by name
    "protocol": frozenset({"core", "registry", "protocol"}),
    "run": frozenset({"core", "toolchain", "backends", "registry", "data", "run"}),
    "campaign": frozenset({"core", "registry", "data", "run", "campaign"}),
    "tuner_adapters": frozenset({"core", "registry", "protocol", "tuner_adapters"}),
    "benchmarks": frozenset({"core", "benchmarks"}),
    "analysis": frozenset({"core", "registry", "data", "analysis"}),
    "analysis/compare": frozenset({"core", "registry", "data", "run", "campaign", "analysis", "analysis/compare"}),
    "analysis/hypertune": frozenset({"core", "registry", "run", "campaign", "analysis", "analysis/compare",
                                     "analysis/hypertune"}),
    "leaderboard": frozenset({"core", "registry", "analysis", "leaderboard"}),
}
ANYTHING = ("cli", "facade")
#: third-party packages a layer must never import
TUNING = frozenset({"optuna", "smac", "ConfigSpace", "kernel_tuner", "cmaes", "sklearn", "torch"})
ANALYSIS = frozenset({"scipy", "matplotlib", "networkx", "catboost", "distributed", "dask"})
DEVICE = frozenset({"cupy", "cuda"})
FORBIDDEN_EXTERNAL: dict[str, frozenset[str]] = {
    "core": TUNING | ANALYSIS | DEVICE | {"typer", "click"},
    "formats": TUNING | ANALYSIS | DEVICE | {"typer", "click"},
    "registry": TUNING | ANALYSIS | DEVICE | {"typer", "click"},
    "data": TUNING | ANALYSIS | DEVICE | {"typer", "click"},
    "testing": ANALYSIS | DEVICE | {"typer", "click"},
    "protocol": TUNING | ANALYSIS | DEVICE | {"typer", "click"},
    "toolchain": TUNING | ANALYSIS,
    "backends": TUNING | ANALYSIS,
    "run": TUNING | ANALYSIS,
    "campaign": TUNING | DEVICE | {"typer", "click", "scipy", "matplotlib", "networkx", "catboost"},
    "benchmarks": TUNING | ANALYSIS | DEVICE,
    "analysis": TUNING - {"sklearn"} | DEVICE,
    "analysis/hypertune": TUNING - {"sklearn"} | DEVICE,
    "tuner_adapters": ANALYSIS - {"scipy"} | DEVICE,
    "leaderboard": TUNING | DEVICE | {"typer", "click"},
}
LAYERS = (*ALLOWED, *ANYTHING)


def layer_of(module: str) -> str | None:
    """The layer of one of our modules: the folder of bat/ it is placed in; None for third-party modules.

    A module placed directly in bat/ (``bat.foo``) gets the layer ``foo``, which no rule knows.
    """
    parts = module.split(".")
    if parts[0] != "bat":
        return None
    if len(parts) == 1:
        return "facade"
    if parts[1:3] in (["analysis", "compare"], ["analysis", "hypertune"]):
        return f"analysis/{parts[2]}"
    return parts[1]


def violations(edges: list[tuple[str, str]]) -> list[str]:
    """Every edge (importer, imported) that breaks a layer, placement or external-package rule."""
    out = []
    for importer, imported in edges:
        source, target = layer_of(importer), layer_of(imported)
        if source is None or source in ANYTHING:
            continue
        if source not in ALLOWED:
            out.append(f"{importer} is in no layer folder")
        elif target is None:
            top = imported.split(".")[0]
            if top in FORBIDDEN_EXTERNAL.get(source, ()):
                out.append(f"{importer} ({source}) imports {imported}")
            elif top in MAPPED:
                out.append(f"{importer} imports {imported} by its folder's name (use bat.{imported})")
        elif target not in ALLOWED[source] and target != source:
            out.append(f"{importer} ({source}) imports {imported} ({target})")
    return out


def cycles(edges: list[tuple[str, str]]) -> list[list[str]]:
    """Groups of our modules that import each other, directly or through others."""
    import networkx as nx  # loads in the test, not when pytest collects this file

    graph = nx.DiGraph((a, b) for a, b in edges if layer_of(b) is not None)
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


#: grimp over the namespace in the current folder: every (importer, imported) pair as JSON
GRAPH = """
import grimp, json
graph = grimp.build_graph("bat", include_external_packages=True, cache_dir=None)
print(json.dumps([[m, i] for m in graph.modules for i in graph.find_modules_directly_imported_by(m)]))
"""


def import_edges(scratch: Path) -> list[tuple[str, str]]:
    """Every import between modules (lazy ones inside functions and TYPE_CHECKING included).

    grimp reads the files of the package it finds, so it runs in a second process in a folder holding the
    namespace as one tree (pyproject.toml's mapping as links, ``static_tree``), where it finds that ``bat``.
    """
    tree = static_tree(scratch)
    found = subprocess.run([sys.executable, "-c", GRAPH], cwd=tree, capture_output=True, text=True, check=True,
                           timeout=300)
    return sorted((m, i) for m, i in json.loads(found.stdout) if layer_of(m) is not None)


def module_files() -> dict[str, Path]:
    """Every module of the namespace (through pyproject.toml's mapping) by dotted name."""
    return dict(modules())


@pytest.fixture(scope="module")
def edges(tmp_path_factory) -> list[tuple[str, str]]:
    return import_edges(tmp_path_factory.mktemp("namespace"))


def test_every_module_is_in_a_layer_folder(edges) -> None:
    ours = {m for m, _ in edges} | {i for _, i in edges if layer_of(i)}
    assert sorted(m for m in ours if layer_of(m) not in LAYERS) == []
    assert {"bat.core.space", "bat.backends.replay", "bat.run.driver", "bat.campaign.design"} <= ours


def test_the_mapped_folders_are_the_top_level_folders() -> None:
    """bat.analysis is analysis/ by pyproject.toml's mapping: no link stands in for it (a checkout without
    symbolic links, core.symlinks=false, must work)."""
    assert set(MAPPED) == {"analysis", "benchmarks", "tuner_adapters", "results"}
    for name in MAPPED:
        assert folder_of(f"bat.{name}") == ROOT / name and not (ROOT / "bat" / name).exists(), name
    assert [p for p in ROOT.joinpath("bat").rglob("*") if p.is_symlink()] == []
    assert [p for p in tracked_files() if p.is_symlink()] == []  # nor anywhere in the repository


def test_the_sandbox_knows_the_mapped_folders() -> None:
    """An isolated tuner may read the code of every mapped sub-package (an editable install leaves them outside
    bat/): the sandbox's list is pyproject.toml's."""
    from bat.tuner_adapters.sandbox import MAPPED as SANDBOX_MAPPED

    assert sorted(SANDBOX_MAPPED) == sorted(name.split(".", 1)[1] for name in package_dirs() if name != "bat")


def test_every_folder_with_code_or_data_is_a_declared_package() -> None:
    """pyproject.toml lists the packages (a mapping cannot be discovered): a new folder left out would be missing
    from the wheel."""
    data = (".py", ".json", ".cu", ".hip", ".cuh", ".c", ".h", ".hpp", ".cpp", ".md")
    assert sorted(set(folders_with_files(data)) ^ set(declared_packages())) == []


def test_no_layer_imports_what_its_rule_forbids(edges) -> None:
    assert violations(edges) == []


def test_no_import_cycle(edges) -> None:
    assert cycles(edges) == []


def test_only_public_names_cross_layers() -> None:
    """``from bat.other_layer import _private`` is a leak: the importer depends on internals."""
    leaks = []
    for module, path in module_files().items():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                    and layer_of(node.module) not in (None, layer_of(module)):
                leaks += [f"{module}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    assert leaks == []


# -- the rules catch what they are for -----------------------------------------------------
#: cycles and upward imports this project once had, at their modules' present places, and misplacements
WRONG: list[tuple[str, str]] = [
    ("bat.registry", "bat.tuner_adapters.catalogue"), ("bat.tuner_adapters.catalogue", "bat.registry"),
    ("bat.backends.live.backend", "bat.run.recording.live"), ("bat.run.recording.live", "bat.backends.live.backend"),
    ("bat.core.benchmark", "bat.core.commandspec"), ("bat.core.commandspec", "bat.core.benchmark"),
    ("bat.core.assess", "bat.analysis.convergence"),  # a campaign module placed in the core
    ("bat.core.journal", "bat.run.recording.engine"),  # a run journal placed in the core
    ("bat.journal", "bat.core.atomic"),  # a module placed directly in bat/
    ("bat.analysis.ffg", "analysis.centrality"),  # a top-level folder imported by its own name
]


def test_the_rules_flag_modules_in_the_wrong_folder() -> None:
    found = violations(WRONG)
    assert "bat.registry (registry) imports bat.tuner_adapters.catalogue (tuner_adapters)" in found
    assert "bat.backends.live.backend (backends) imports bat.run.recording.live (run)" in found
    assert "bat.core.assess (core) imports bat.analysis.convergence (analysis)" in found
    assert "bat.core.journal (core) imports bat.run.recording.engine (run)" in found
    assert "bat.journal is in no layer folder" in found
    assert any(v.startswith("bat.analysis.ffg imports analysis.centrality by its folder's name") for v in found)
    assert violations([("bat.core.space", "optuna"), ("bat.core.problem", "scipy.stats")]) == [
        "bat.core.space (core) imports optuna", "bat.core.problem (core) imports scipy.stats"]


def test_the_rules_flag_cycles() -> None:
    found = cycles(WRONG)
    assert ["bat.registry", "bat.tuner_adapters.catalogue"] in found
    assert ["bat.backends.live.backend", "bat.run.recording.live"] in found
    assert ["bat.core.benchmark", "bat.core.commandspec"] in found


def test_the_import_contracts_hold(tmp_path) -> None:
    """pyproject.toml's import-linter contracts (the layer order) are kept by the repository as it is."""
    result = lint_imports(static_tree(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 kept, 0 broken" in result.stdout


def test_the_import_contracts_fail_on_a_wrong_edge(tmp_path) -> None:
    """An upward import (the data checks importing an analysis, as they once did) and a package placed in no
    layer each break a contract; the tree is a copy, the repository is not touched."""
    tree = static_tree(tmp_path)
    data = tree / "bat" / "data"
    data.unlink()
    shutil.copytree(ROOT / "bat" / "data", data, ignore=shutil.ignore_patterns("__pycache__"))
    (data / "wrong.py").write_text('"""An upward edge."""\nfrom bat.analysis.noise import noise_set\n')
    (tree / "bat" / "stray").mkdir()
    (tree / "bat" / "stray" / "__init__.py").write_text('"""A package in no layer."""\n')
    result = lint_imports(tree)
    assert result.returncode == 1
    assert "bat.data.wrong -> bat.analysis.noise" in result.stdout
    assert "bat.stray" in result.stdout and "2 kept, 1 broken" in result.stdout


def contract_layers() -> list[set[str]]:
    """The layers of pyproject.toml's first import-linter contract (bat's layers), highest first."""
    contract = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    return [{name.strip() for name in line.replace(":", "|").split("|")} for line in contract["contracts"][0]["layers"]]


def test_the_contract_and_the_table_agree() -> None:
    """Every layer of the table is in the contract, and the table lets a layer use only layers the contract puts
    below it: the two statements of the layering cannot drift apart."""
    order = contract_layers()
    level = {name: i for i, names in enumerate(order) for name in names}
    top = {layer for layer in ALLOWED if "/" not in layer}
    assert set(level) == top | {"cli"}
    upward = [(layer, used) for layer in top for used in ALLOWED[layer] - {layer} if level[used] <= level[layer]]
    assert upward == []


def command_bodies() -> dict[str, int]:
    """Lines of each CLI command's body (after its docstring): ``app.command(NAME)(function)`` in bat/cli."""
    out = {}
    for path in sorted((ROOT / "bat" / "cli").glob("*_cmd.py")):
        tree = ast.parse(path.read_text(), str(path))
        registered = {node.args[0].id for node in ast.walk(tree)
                      if isinstance(node, ast.Call) and isinstance(node.func, ast.Call)
                      and node.args and isinstance(node.args[0], ast.Name)}
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in registered:
                first = node.body[1] if isinstance(node.body[0], ast.Expr) and len(node.body) > 1 else node.body[0]
                out[f"{path.name}:{node.name}"] = node.end_lineno - first.lineno + 1
    return out


def test_command_bodies_parse_call_and_print() -> None:
    """A command body parses, calls one library function and prints: the work lives in the library."""
    bodies = command_bodies()
    assert len(bodies) >= 12 and "run_cmd.py:run" in bodies
    assert {name: n for name, n in bodies.items() if n > 60} == {}
