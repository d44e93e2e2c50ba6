"""The tuner table: every tuner by name, as a ``"module:attr"`` string plus its arguments.

Importing this module imports no tuning library; ``bat list tuners`` reads it.
"""

from __future__ import annotations

from bat.registry import TunerEntry, register_tuner

_OPTUNA = "tuner_adapters.optuna_tuner:OptunaTuner"

for _entry in (
    TunerEntry("reference:random", "tuner_adapters.reference.random_search:RandomSearch",
               "uniform random sampling of valid configurations, without replacement"),
    TunerEntry("optuna", _OPTUNA, "Optuna TPE (tree-structured Parzen estimator)", {"sampler": "tpe"}, "optuna"),
    TunerEntry("optuna:random", _OPTUNA, "Optuna random sampler", {"sampler": "random"}, "optuna"),
    TunerEntry("optuna:gp", _OPTUNA, "Optuna Gaussian-process Bayesian optimization", {"sampler": "gp"}, "optuna"),
    TunerEntry("optuna:cmaes", _OPTUNA, "Optuna CMA-ES on the value indices", {"sampler": "cmaes"}, "optuna"),
    TunerEntry("profile", "tuner_adapters.profile.search:ProfileSearch",
               "profile-guided search (KTT): counters' bottleneck steers a weighted random step",
               {"mode": "auto"}, "scikit-learn (predicted mode)"),
    TunerEntry("profile:exact", "tuner_adapters.profile.search:ProfileSearch",
               "profile-guided search with every candidate's counters read from the dataset", {"mode": "exact"}),
    TunerEntry("profile:predicted", "tuner_adapters.profile.search:ProfileSearch",
               "profile-guided search with candidates' counters predicted by decision trees",
               {"mode": "predicted"}, "scikit-learn"),
):
    register_tuner(_entry)
