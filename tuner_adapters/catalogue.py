"""The tuner table: every variant of our tuner families as ``"module:Class"`` strings plus arguments.

Each mapping below is one entry point of the group ``bat.tuners``
(pyproject.toml); the registry names its variants ``FAMILY`` (key ``""``)
and ``FAMILY:KEY``. Importing this module imports no tuning library, so
``bat list tuners`` stays fast.
"""

from __future__ import annotations

from bat.core.tuner import TunerEntry

_REF = "bat.tuner_adapters.reference"
_OPTUNA = "bat.tuner_adapters.optuna_tuner:OptunaTuner"
_SMAC = "bat.tuner_adapters.smac_tuner:SmacTuner"
_KT = "bat.tuner_adapters.kernel_tuner_tuner:KernelTunerStrategy"
_PROFILE = "bat.tuner_adapters.profile.search:ProfileSearch"
_KT_HOW = " (its strategy code, runner evaluates through our Problem)"
_TRANSFER = "bat.tuner_adapters.transfer"

REFERENCE: dict[str, TunerEntry] = {
    "random": TunerEntry(f"{_REF}.random_search:RandomSearch",
                         "uniform random sampling of valid configurations, without replacement"),
    "random-timeout": TunerEntry(f"{_REF}.random_search:RandomSearch",
                                 "random search that stops measuring a configuration past 2 x the best so far",
                                 {"timeout_factor": 2.0}),
    "random-screen": TunerEntry(f"{_REF}.screening:ScreenedRandom", "random search that screens each configuration "
                                "with 2 recorded repeats and measures it in full when within 1.2 x the best"),
    "grid": TunerEntry(f"{_REF}.grid:GridSearch",
                       "exhaustive search of valid configurations in flat-id order (last parameter fastest)"),
    "shrinking_sample": TunerEntry(f"{_REF}.shrinking_sample:ShrinkingSample",
                                   "shrinking sample (Li and Agrawal): grids of section medians, k=3, V_TH=2"),
    "nelder_mead": TunerEntry(f"{_REF}.nelder_mead:NelderMead", "Nelder-Mead on the index grid, rounded to "
                              "the nearest valid config; restarts on convergence"),
    "coordinate": TunerEntry(f"{_REF}.coordinate:CoordinateSearch",
                             "coordinate search, step x0.75 after a round without improvement; restarts when it stops"),
    "genetic": TunerEntry(f"{_REF}.genetic:GeneticAlgorithm", "genetic algorithm: tournament selection, uniform "
                          "crossover, rare mutation, valid offspring"),
    "random_forest": TunerEntry(f"{_REF}.random_forest:RandomForestSearch", "random forest (scikit-learn) on 20 "
                                "random samples, then its top-10 predictions, repeated", requires="scikit-learn"),
}

PROFILE: dict[str, TunerEntry] = {
    "": TunerEntry(_PROFILE, "profile-guided search (KTT): the counters' bottleneck steers a weighted random step",
                   {"mode": "auto"}, "scikit-learn"),
    "exact": TunerEntry(_PROFILE, "profile-guided search, every candidate's counters read from the target's "
                        "data (an oracle)", {"mode": "exact"}, oracle=True),
    "predicted": TunerEntry(_PROFILE, "profile-guided search, candidates' counters predicted by decision trees",
                            {"mode": "predicted"}, "scikit-learn"),
    "online": TunerEntry(_PROFILE, "profile-guided search, counters predicted by trees refitted on the counters "
                         "measured in this run (live, no recorded counters)", {"mode": "online"}, "scikit-learn"),
}

#: tuners that need a prior (other GPUs' measured data of the space: problem.facts.others, the transfer study)
TRANSFER: dict[str, TunerEntry] = {
    "best": TunerEntry(f"{_TRANSFER}.best:BestFirst", "transfer: the other GPUs' best configurations first "
                       "(BAT 2.0 baseline), then random search"),
    "rank": TunerEntry(f"{_TRANSFER}.rank:RankTransfer", "transfer: configurations by mean normalised rank over "
                       "the other GPUs, then a local search around the best measured"),
    "model": TunerEntry(f"{_TRANSFER}.model:ModelTransfer", "transfer: a model of time from GPU facts and the "
                        "configuration (scikit-learn), re-weighted by the target's measurements",
                        requires="scikit-learn"),
}

OPTUNA: dict[str, TunerEntry] = {
    "": TunerEntry(_OPTUNA, "Optuna TPE (tree-structured Parzen estimator), ask/tell", {"sampler": "tpe"}, "optuna"),
    "random": TunerEntry(_OPTUNA, "Optuna random sampler, ask/tell", {"sampler": "random"}, "optuna"),
    "tpe-liar": TunerEntry(_OPTUNA, "Optuna TPE with a constant liar: a batch in flight on parallel compile "
                           "workers, ask/tell", {"sampler": "tpe", "constant_liar": True}, "optuna"),
    "gp": TunerEntry(_OPTUNA, "Optuna Gaussian-process Bayesian optimization, ask/tell (needs PyTorch)",
                     {"sampler": "gp"}, "optuna"),
    "cmaes": TunerEntry(_OPTUNA, "Optuna CMA-ES on the value indices, ask/tell (needs cmaes)",
                        {"sampler": "cmaes"}, "optuna"),
}

SMAC: dict[str, TunerEntry] = {
    "": TunerEntry(_SMAC, "SMAC3 HPO facade (random forest, one thread), ask/tell; constraints as ConfigSpace "
                   "forbidden clauses", {"facade": "hpo"}, "smac"),
    "bo": TunerEntry(_SMAC, "SMAC3 black-box facade (Gaussian process, one thread), ask/tell; constraints as "
                     "ConfigSpace forbidden clauses", {"facade": "blackbox"}, "smac"),
}

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

KERNEL_TUNER: dict[str, TunerEntry] = {
    name: TunerEntry(_KT, f"Kernel Tuner {what}{_KT_HOW}", {"strategy": name}, "kernel_tuner")
    for name, what in _KT_STRATEGIES.items()
}
