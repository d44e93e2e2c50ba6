"""Write reference_N<n>.txt: the row checksums matmul.c must produce, computed with NumPy.

The inputs are the same integer formulas as in matmul.c; products and sums
of such small integers are exact, so the reference is exact too. Run from
anywhere: ``python benchmarks/matmul_c/make_reference.py 64 256``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np


def checksums(n: int) -> np.ndarray:
    """Weighted row sums of A @ B for the inputs of matmul.c at size ``n`` (int64, exact)."""
    i = np.arange(n, dtype=np.int64)[:, None]
    k = np.arange(n, dtype=np.int64)[None, :]
    a = (i * 7 + k * 3) % 11 - 5
    b = (i * 5 + k * 2) % 13 - 6
    weights = np.arange(n, dtype=np.int64) % 7 + 1
    return (a @ b) @ weights


def reference_text(n: int) -> str:
    return "".join(f"{v}\n" for v in checksums(n).tolist())


if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    for arg in sys.argv[1:]:
        (here / f"reference_N{int(arg)}.txt").write_text(reference_text(int(arg)))
