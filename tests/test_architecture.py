"""The dependency rules of docs/DESIGN.md, checked on the real import graph (grimp) of every package.

Layers, lowest first; a module may import its own layer and the ones its
rule allows, nothing else:

- core: spaces, expressions, benchmarks, datasets and importers, the problem,
  traces, the tuner, backend and kernel-runner contracts, registries, errors,
  the battery (``bat.testing``), the tuner protocol (``bat.protocol``);
- toolchain: NVRTC, compile pools, ptxas parsing, ncu;
- backends: replay, command, live (depend on core and toolchain only);
- wiring: targets, the run driver, recording;
- adapters (``tuner_adapters``) and benchmark runners (``benchmarks``): core only;
- analysis: core only; the campaign engine (``analysis.compare``): core,
  wiring and analysis;
- cli and the public facade (``bat/__init__``): anything.

The core imports no tuning, analysis or device library. No import cycle
exists anywhere. Across packages only public names are imported. The rules
are data (``LAYERS``, ``ALLOWED``, ``FORBIDDEN_EXTERNAL``); the last tests
feed them the violations this project once had, to show each is caught.
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bat", "analysis", "tuner_adapters", "benchmarks")

#: layer -> module prefixes (the longest matching prefix decides)
LAYERS: dict[str, tuple[str, ...]] = {
    "core": ("bat.errors", "bat.atomic", "bat.locking", "bat.lifetime", "bat.arithmetic",
             "bat.expressions", "bat.space", "bat.constraint_groups", "bat.spacefile",
             "bat.commandspec", "bat.benchmark", "bat.costs", "bat.dataset", "bat.importers", "bat.problem",
             "bat.trace", "bat.tuner", "bat.kernel", "bat.registry", "bat.counters", "bat.counters.metrics",
             "bat.testing", "bat.gpus", "bat.schemas", "bat.protocol", "bat.t1", "bat.userdata"),
    "toolchain": ("bat.nvrtc", "bat.compiling", "bat.resources", "bat.counters.ncu", "bat.counters.profiler"),
    "backends": ("bat.backends",),
    "wiring": ("bat.targets", "bat.driver", "bat.recording", "bat.profile_one"),
    "cli": ("bat.cli",),
    "facade": ("bat",),
    "adapters": ("tuner_adapters",),
    "benchmarks": ("benchmarks",),
    "analysis": ("analysis",),
    "campaign": ("analysis.compare",),
}
#: layer -> layers it may import
ALLOWED: dict[str, frozenset[str]] = {
    "core": frozenset({"core"}),
    "toolchain": frozenset({"core", "toolchain"}),
    "backends": frozenset({"core", "toolchain", "backends"}),
    "wiring": frozenset({"core", "toolchain", "backends", "wiring"}),
    "adapters": frozenset({"core", "adapters"}),
    "benchmarks": frozenset({"core", "benchmarks"}),
    "analysis": frozenset({"core", "analysis"}),
    "campaign": frozenset({"core", "wiring", "analysis", "campaign"}),
    "cli": frozenset(LAYERS),
    "facade": frozenset(LAYERS),
}
#: third-party packages a layer must never import
TUNING = frozenset({"optuna", "smac", "ConfigSpace", "kernel_tuner", "cmaes", "sklearn", "torch"})
ANALYSIS = frozenset({"scipy", "matplotlib", "networkx", "catboost", "distributed", "dask"})
DEVICE = frozenset({"cupy", "cuda"})
FORBIDDEN_EXTERNAL: dict[str, frozenset[str]] = {
    "core": TUNING | ANALYSIS | DEVICE | {"typer", "click"},
    "toolchain": TUNING | ANALYSIS,
    "backends": TUNING | ANALYSIS,
    "wiring": TUNING | ANALYSIS,
    "benchmarks": TUNING | ANALYSIS | DEVICE,
    "analysis": TUNING - {"sklearn"} | DEVICE,
    "adapters": ANALYSIS - {"scipy"} | DEVICE,
}


def layer_of(module: str) -> str | None:
    """The layer of ``module`` (longest matching prefix), None for third-party modules."""
    best, length = None, -1
    for layer, prefixes in LAYERS.items():
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = layer, len(prefix)
    return best


def violations(edges: list[tuple[str, str]]) -> list[str]:
    """Every edge (importer, imported) that breaks a layer or external-package rule."""
    out = []
    for importer, imported in edges:
        source, target = layer_of(importer), layer_of(imported)
        if source is None:
            continue
        if target is None:
            if imported.split(".")[0] in FORBIDDEN_EXTERNAL.get(source, ()):
                out.append(f"{importer} ({source}) imports {imported}")
        elif target not in ALLOWED[source]:
            out.append(f"{importer} ({source}) imports {imported} ({target})")
    return out


def cycles(edges: list[tuple[str, str]]) -> list[list[str]]:
    """Groups of our modules that import each other, directly or through others."""
    graph = nx.DiGraph((a, b) for a, b in edges if layer_of(b) is not None)
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


def import_edges() -> list[tuple[str, str]]:
    """Every import between modules (lazy ones inside functions and TYPE_CHECKING included)."""
    graph = grimp.build_graph(*PACKAGES, include_external_packages=True, cache_dir=None)
    return sorted((m, i) for m in graph.modules if layer_of(m) is not None
                  for i in graph.find_modules_directly_imported_by(m))


@pytest.fixture(scope="module")
def edges() -> list[tuple[str, str]]:
    return import_edges()


def test_every_module_has_a_layer(edges) -> None:
    ours = {m for m, _ in edges} | {i for _, i in edges if i.split(".")[0] in PACKAGES}
    assert all(layer_of(m) for m in ours)
    assert {"bat.space", "bat.backends.replay", "bat.driver", "analysis.compare.campaign"} <= ours


def test_no_layer_imports_what_its_rule_forbids(edges) -> None:
    assert violations(edges) == []


def test_no_import_cycle(edges) -> None:
    assert cycles(edges) == []


def test_only_public_names_cross_package_boundaries() -> None:
    """``from other.package import _private`` is a leak: the importer depends on internals."""
    leaks = []
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    top = node.module.split(".")[0]
                    if top in PACKAGES and top != package:
                        leaks += [f"{path.relative_to(ROOT)}: {node.module}.{a.name}"
                                  for a in node.names if a.name.startswith("_")]
    assert leaks == []


# -- the rules catch what this project once had ------------------------------------------
#: the five cycles and upward imports of an earlier version of this tree
ONCE: list[tuple[str, str]] = [
    ("bat.registry", "tuner_adapters.catalogue"), ("tuner_adapters.catalogue", "bat.registry"),
    ("bat.backends.live", "bat.runner"), ("bat.runner", "bat.backends.live"),
    ("bat.benchmark", "bat.commandspec"), ("bat.commandspec", "bat.benchmark"),
    ("bat.backends.command_record", "bat.record"), ("bat.backends.live", "bat.record"),
    ("bat.compare.assess", "analysis.convergence"), ("bat.compare.plots", "analysis.convergence"),
]


def test_the_rules_flag_the_old_upward_imports() -> None:
    LAYERS["wiring"] += ("bat.runner", "bat.record")  # their old homes, for this check only
    LAYERS["core"] += ("bat.compare",)
    try:
        found = violations(ONCE)
        assert any("bat.registry (core) imports tuner_adapters.catalogue" in v for v in found)
        assert any("bat.backends.live (backends) imports bat.runner" in v for v in found)
        assert any("bat.backends.command_record (backends) imports bat.record" in v for v in found)
        assert any("bat.backends.live (backends) imports bat.record" in v for v in found)
        assert any("bat.compare.assess (core) imports analysis.convergence" in v for v in found)
        assert any("bat.compare.plots (core) imports analysis.convergence" in v for v in found)
        assert violations([("bat.space", "optuna"), ("bat.problem", "scipy.stats")]) == [
            "bat.space (core) imports optuna", "bat.problem (core) imports scipy.stats"]
    finally:
        LAYERS["wiring"] = LAYERS["wiring"][:-2]
        LAYERS["core"] = LAYERS["core"][:-1]


def test_the_rules_flag_the_old_cycles() -> None:
    found = cycles(ONCE)
    assert ["bat.registry", "tuner_adapters.catalogue"] in found
    assert ["bat.backends.live", "bat.runner"] in found
    assert ["bat.benchmark", "bat.commandspec"] in found
