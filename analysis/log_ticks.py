"""Log-axis tick labels in plain text: ``PlainLogFormatter``, a ``matplotlib.ticker.LogFormatter``.

A module of its own so that ``bat.analysis.plots`` imports matplotlib only when
it labels a figure (the leaderboard and the tests' collection import that module).
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import LogFormatter

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


class PlainLogFormatter(LogFormatter):
    """matplotlib's log-axis labels (which ticks get one is its choice) written as plain text.

    Powers of ten from 0.001 to 1000 read as decimals, the others as 10 with a superscript
    exponent (no mathtext needed); a labelled tick between decades (2, 30, 0.05) reads as ``%g``.
    """

    def _num_to_string(self, x: float, vmin: float, vmax: float) -> str:
        exponent = np.log10(abs(x)) if x else 0.0
        if x and abs(exponent - round(exponent)) < 1e-9 and not -3 <= round(exponent) <= 3:
            return ("-" if x < 0 else "") + "10" + str(round(exponent)).translate(_SUPERSCRIPT)
        return f"{x:g}"
