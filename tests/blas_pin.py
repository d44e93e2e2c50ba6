"""Pin OpenBLAS's kernels for the test run, so that traces of tuners that use BLAS are the same on every x86-64 CPU.

NumPy's and SciPy's OpenBLAS picks its kernels by the CPU it finds: on a CPU with AVX-512 it takes the
SkylakeX kernels, on others the Haswell ones, and their sums round differently. Tuners that fit a model
with BLAS (Optuna's CMA-ES, SMAC's Gaussian process, Kernel Tuner's dual annealing through SciPy) then
propose other configurations after a few steps, and their traces differ from
``tests/fixtures/traces/digests.json`` (recorded on a CPU without AVX-512). ``OPENBLAS_CORETYPE`` names the
kernels OpenBLAS should take; it is read when the library loads, so this runs before NumPy is imported
(the top of tests/conftest.py, which xdist's workers inherit the variable from, and of
tests/trace_digests.py run as a script). Only on x86-64 CPUs that have AVX2 (Haswell's kernels need it),
and never over a value the user set.
"""

from __future__ import annotations

import os
import platform

#: the OpenBLAS kernels every test run takes (those the recorded digests were made with)
CORETYPE = "Haswell"


def pin_openblas() -> None:
    """Set ``OPENBLAS_CORETYPE`` to ``CORETYPE`` where the CPU can run those kernels and it is not set."""
    if "OPENBLAS_CORETYPE" in os.environ or platform.machine() not in ("x86_64", "AMD64"):
        return
    try:
        with open("/proc/cpuinfo") as f:  # Linux; elsewhere OpenBLAS chooses as it does
            flags = next((line for line in f if line.startswith("flags")), "").split()
    except OSError:
        return
    if "avx2" in flags and "fma" in flags:
        os.environ["OPENBLAS_CORETYPE"] = CORETYPE
