"""Collecting the suite loads no analysis or tuner library: each test file imports those where it uses them.

Collection imports every test file before any test runs (on two cores, cold, it once took 45 s); SciPy,
Numba, networkx, matplotlib, Jupyter's client and the tuners' libraries then load only in the tests that call them. The
check is on the set of modules loaded when collection finished (tests/conftest.py keeps it), never on a time:
the collection time itself is measured by ``bench/collection_bench.py``.
"""

from __future__ import annotations

import pytest
from conftest import LOADED_BY_COLLECTION

#: loaded by the tests that use them, never by collection (matplotlib too: bat.analysis.plots loads it on first draw)
TEST_TIME_ONLY = frozenset({"scipy", "numba", "llvmlite", "networkx", "nbclient", "jupyter_client", "catboost",
                            "sklearn", "optuna", "smac", "ConfigSpace", "torch", "dask", "distributed",
                            "kernel_tuner", "cupy", "matplotlib"})


def test_collecting_loads_no_analysis_or_tuner_library(request: pytest.FixtureRequest) -> None:
    loaded = request.config.stash[LOADED_BY_COLLECTION]
    assert __name__ in loaded  # the stash holds what collection loaded, this file included
    assert not loaded & TEST_TIME_ONLY, sorted(loaded & TEST_TIME_ONLY)
