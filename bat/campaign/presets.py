"""Named campaign designs (``bat compare --preset NAME``).

``sample-size-study``: the design of the sample-size study of tuners on
GPU kernels: random search, a random-forest model, a genetic algorithm and
Bayesian optimization with a Gaussian process (SMAC) and with TPE (Optuna),
at 25, 50, 100, 200 and 400 evaluations, with each run's final
configuration re-measured 10 times. On replay the re-measurements are drawn
from the repeated times recorded for that configuration, and the output
says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from bat.core.errors import UnknownNameError


@dataclass(frozen=True)
class Preset:
    """Defaults a preset gives the options the user did not set."""

    tuners: tuple[str, ...]
    budgets: tuple[int, ...]
    remeasure: int
    note: str


PRESETS: dict[str, Preset] = {
    "sample-size-study": Preset(
        tuners=("reference:random", "reference:random_forest", "reference:genetic", "smac:bo", "optuna"),
        budgets=(25, 50, 100, 200, 400),
        remeasure=10,
        note="preset sample-size-study: random search, random forest, genetic algorithm, BO with a "
             "Gaussian process (smac:bo) and with TPE (optuna) at 25-400 evaluations; final "
             "configurations re-measured 10 times",
    ),
}


def preset(name: str) -> Preset:
    if name not in PRESETS:
        raise UnknownNameError("preset", name, sorted(PRESETS))
    return PRESETS[name]
