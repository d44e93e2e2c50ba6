"""The emulated backend beyond GCC: two kernels' CI selections and broken variants built with clang++.

clang differs from GCC where the emulator depends on the compiler: it announces
AddressSanitizer with ``__has_feature`` (the fiber switches must still be told to
ASan), links ASan's runtime into the executable (its static locals must not be taken
for the kernel's shared memory) and pads instrumented globals with a redzone that
the symbol's size includes (the shared-memory fill must stop before it). Convolution has
shared memory, pnpoly has none. ``.ci/run`` installs Debian's clang when it is
missing, so in CI (``CI`` set) a missing clang++ fails instead of skipping.
"""

from __future__ import annotations

import os
import shutil

import pytest
from kernel_configs import CONFIGS
from test_emulated_broken import VARIANTS

from bat.backends.emulated.selection import ci_selection
from bat.backends.emulated.session import EmulatedSession
from bat.core.benchmark import load_benchmark

CLANG = shutil.which("clang++")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CLANG is None and not os.environ.get("CI"),
                       reason="clang++ is not installed (.ci/run installs Debian's clang package)"),
]
KERNELS = ("convolution", "pnpoly")


def session_for(name: str) -> EmulatedSession:
    bench = load_benchmark(name)
    return EmulatedSession(bench, bench.size("emulation"))


@pytest.fixture(autouse=True)
def _clang(monkeypatch) -> None:
    monkeypatch.setenv("CXX", "clang++")


@pytest.mark.parametrize("name", KERNELS)
def test_ci_selection_is_correct_when_built_with_clang(name: str) -> None:
    session = session_for(name)
    assert "clang" in session.describe()
    failures, ran = [], 0
    for item in ci_selection(session.bench, session.size, accept=session.gpu_accepts):
        checked = session.verify(item.config)
        if checked.refused:
            continue
        ran += 1
        if not checked.ok:
            failures.append(f"{item.why} {item.config}: {checked.result.status.value}: {checked.result.message}")
    assert not failures, "\n".join(failures)
    assert ran >= 4


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v.benchmark in KERNELS and not v.options],
                         ids=lambda v: f"{v.benchmark}: {v.what}")
def test_broken_variant_is_caught_when_built_with_clang(variant) -> None:
    session = session_for(variant.benchmark)
    result = session.verify(CONFIGS[variant.benchmark], source=variant.apply(session.source)).result
    assert (result.status, variant.says in result.message) == (variant.status, True), result.message
