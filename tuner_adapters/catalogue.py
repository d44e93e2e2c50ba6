"""The tuner table: every tuner by name, as a ``"module:attr"`` string plus its arguments.

Importing this module imports no tuning library; ``bat list tuners`` reads it.
"""

from __future__ import annotations

from bat.registry import TunerEntry, register_tuner

_REF = "tuner_adapters.reference"
_OPTUNA = "tuner_adapters.optuna_tuner:OptunaTuner"
_SMAC = "tuner_adapters.smac_tuner:SmacTuner"
_KT = "tuner_adapters.kernel_tuner_tuner:KernelTunerStrategy"
_KT_HOW = " (its strategy code, runner evaluates through our Problem)"

_REFERENCE = (
    TunerEntry("reference:random", f"{_REF}.random_search:RandomSearch",
               "uniform random sampling of valid configurations, without replacement"),
    TunerEntry("reference:grid", f"{_REF}.grid:GridSearch",
               "exhaustive search of valid configurations in flat-id order (last parameter fastest)"),
    TunerEntry("reference:shrinking_sample", f"{_REF}.shrinking_sample:ShrinkingSample",
               "shrinking sample (Li and Agrawal): grids of section medians, k=3, V_TH=2"),
    TunerEntry("reference:nelder_mead", f"{_REF}.nelder_mead:NelderMead",
               "Nelder-Mead on the index grid, rounded to the nearest valid config; restarts on convergence"),
    TunerEntry("reference:coordinate", f"{_REF}.coordinate:CoordinateSearch",
               "coordinate search, step x0.75 after a round without improvement; restarts when it stops"),
    TunerEntry("reference:genetic", f"{_REF}.genetic:GeneticAlgorithm",
               "genetic algorithm: tournament selection, uniform crossover, rare mutation, valid offspring"),
    TunerEntry("profile", "tuner_adapters.profile.search:ProfileSearch",
               "profile-guided search (KTT): the counters' bottleneck steers a weighted random step",
               {"mode": "auto"}, "scikit-learn"),
    TunerEntry("profile:exact", "tuner_adapters.profile.search:ProfileSearch",
               "profile-guided search, every candidate's counters read from the dataset", {"mode": "exact"}),
    TunerEntry("profile:predicted", "tuner_adapters.profile.search:ProfileSearch",
               "profile-guided search, candidates' counters predicted by decision trees",
               {"mode": "predicted"}, "scikit-learn"),
    TunerEntry("reference:random_forest", f"{_REF}.random_forest:RandomForestSearch",
               "random forest (scikit-learn) on 20 random samples, then its top-10 predictions, repeated",
               requires="scikit-learn"),
)

_LIBRARIES = (
    TunerEntry("optuna", _OPTUNA, "Optuna TPE (tree-structured Parzen estimator), ask/tell",
               {"sampler": "tpe"}, "optuna"),
    TunerEntry("optuna:random", _OPTUNA, "Optuna random sampler, ask/tell", {"sampler": "random"}, "optuna"),
    TunerEntry("optuna:gp", _OPTUNA, "Optuna Gaussian-process Bayesian optimization, ask/tell (needs PyTorch)",
               {"sampler": "gp"}, "optuna"),
    TunerEntry("optuna:cmaes", _OPTUNA, "Optuna CMA-ES on the value indices, ask/tell (needs cmaes)",
               {"sampler": "cmaes"}, "optuna"),
    TunerEntry("smac", _SMAC, "SMAC3 HPO facade (random forest, one thread), ask/tell; constraints as "
               "ConfigSpace forbidden clauses", {"facade": "hpo"}, "smac"),
    TunerEntry("smac:bo", _SMAC, "SMAC3 black-box facade (Gaussian process, one thread), ask/tell; "
               "constraints as ConfigSpace forbidden clauses", {"facade": "blackbox"}, "smac"),
)

_KT_STRATEGIES = {
    "random_sample": "random sampling",
    "genetic_algorithm": "genetic algorithm",
    "simulated_annealing": "simulated annealing",
    "dual_annealing": "dual annealing (SciPy)",
    "greedy_ils": "greedy iterated local search",
    "greedy_mls": "greedy multi-start local search",
    "bayes_opt": "Bayesian optimization",
    "pso": "particle swarm optimization",
    "firefly_algorithm": "firefly algorithm",
    "diff_evo": "differential evolution",
    "mls": "multi-start local search",
    "brute_force": "brute force (its enumeration order)",
    "basinhopping": "basin hopping (SciPy)",
    "minimize": "local minimization (SciPy)",
}

for _entry in (*_REFERENCE, *_LIBRARIES):
    register_tuner(_entry)
for _name, _what in _KT_STRATEGIES.items():
    register_tuner(TunerEntry(f"kernel_tuner:{_name}", _KT, f"Kernel Tuner {_what}{_KT_HOW}",
                              {"strategy": _name}, "kernel_tuner"))
