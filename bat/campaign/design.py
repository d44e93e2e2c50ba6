"""A comparison campaign: which tuners, on which targets, at which budgets, how often.

A campaign is the Cartesian product (tuner, benchmark, GPU, repeat); each
element becomes one or more *runs* (``RunSpec``), independent of each other.

Seeds. Repeat r of tuner label L on (benchmark B, GPU G) under campaign seed
S runs with the 32-bit seed
``SeedSequence([S, r, w0, w1, w2, w3]).generate_state(1)[0]``, where
``w0..w3`` are the first four little-endian 32-bit words of
``sha256("L|B|G")``. The seed does not depend on the budget or on the other
tuners of the campaign, so adding a tuner or a budget never changes the runs
already made, and the same label gets the same seeds in a baseline and in a
later campaign (an unchanged tuner reproduces its baseline exactly).

Budgets. A run with budget B records its trace; the best configuration after
its first k charged evaluations is what a run with budget k would have found
*if the tuner does not look at the budget*. For a tuner that declares itself
``budget_agnostic`` (a capability on its class, bat.core.tuner) one run at the
largest budget therefore serves every smaller budget (its trace prefixes);
every other tuner is run once per budget, which is always correct, only
slower.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import numpy as np

from bat.core.errors import BatError
from bat.core.limits import MAX_BUDGET, MAX_CAMPAIGN_RUNS
from bat.core.schedule import CLOCK_REVISION
from bat.core.timeouts import check_factor
from bat.core.tuner import Tuner
from bat.registry import make_tuner
from bat.run.targets import NOISE_MODES


class CampaignError(BatError, ValueError):
    """A campaign that cannot be run as defined (names the option that is wrong)."""


def check_size(budget: int, runs: int, budget_option: str = "--budgets", runs_option: str = "") -> None:
    """Refuse a comparison whose largest budget or number of runs (tuners x targets x budgets x repeats) is
    past ``bat.core.limits``: its curves, bands and figures grow with the one, its plan with the other."""
    if budget > MAX_BUDGET:
        raise CampaignError(f"{budget_option}: at most {MAX_BUDGET:,} evaluations (bat.core.limits.MAX_BUDGET), "
                            f"got {budget:,}")
    if runs > MAX_CAMPAIGN_RUNS:
        raise CampaignError(f"{runs_option + ': ' if runs_option else ''}{runs:,} runs (tuners x targets x budgets x "
                            f"repeats), over the limit of {MAX_CAMPAIGN_RUNS:,} (bat.core.limits.MAX_CAMPAIGN_RUNS)")


def file_label(label: str) -> str:
    """The part of a file name a tuner label becomes (plots, IOHprofiler folders): unsafe characters as '_'."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", label)


@dataclass(frozen=True)
class TunerSpec:
    """A tuner as a campaign names it: a label (for tables and the gate) and what builds it.

    ``spec`` is a registered name (``bat list tuners``) or an import path
    ``package.module:Class`` of a ``Tuner`` subclass (a tuner outside BAT).
    """

    label: str
    spec: str
    options: tuple[str, ...] = ()  # KEY=VALUE hyper-parameters (-O form), checked when the tuner is built
    compile_workers: int = 1  # compile workers of the simulated clock its runs get (bat.core.schedule)

    def at_workers(self, k: int, several: bool) -> TunerSpec:
        """This tuner on ``k`` compile workers, labelled ``LABEL@kK`` when the campaign has ``several`` K."""
        return replace(self, label=f"{self.label}@k{k}" if several else self.label, compile_workers=k)

    @property
    def seed_label(self) -> str:
        """The label its seeds derive from: without the ``@kK`` of a campaign of several K, so a tuner
        on 1 and on 8 compile workers runs with the same seeds."""
        return self.label.removesuffix(f"@k{self.compile_workers}")

    @classmethod
    def parse(cls, text: str) -> TunerSpec:
        """``NAME`` or ``LABEL=NAME`` (NAME: a registered tuner or ``module:Class``)."""
        label, sep, spec = text.strip().partition("=")
        if not sep:
            spec = label
        label, spec = label.strip(), spec.strip()
        if not label or not spec:
            raise CampaignError(f"--tuners entry {text!r}: expected NAME or LABEL=NAME")
        return cls(label, spec)

    @functools.cached_property
    def capabilities(self) -> dict[str, bool]:
        """The tuner's own declarations (bat.core.tuner capabilities), read once."""
        return self.build().capabilities()

    @property
    def budget_agnostic(self) -> bool:
        return self.capabilities["budget_agnostic"]

    @property
    def oracle(self) -> bool:
        """The tuner reads the target's measurements (bat.core.facts): shown apart, only with --oracles."""
        return self.capabilities["oracle"]

    @property
    def slow(self) -> bool:
        """A run costs seconds even on a tiny space (a model fit per step): the scheduler runs it alone."""
        return self.capabilities["slow"]

    def build(self) -> Tuner:
        """A fresh tuner object (a registered name or ``package.module:Class``)."""
        return make_tuner(self.spec, self.options)


@dataclass(frozen=True)
class RunSpec:
    """One tuner run of a campaign; ``budgets`` are the budgets its trace answers for."""

    tuner: TunerSpec
    benchmark: str
    gpu: str
    repeat: int
    seed: int
    budgets: tuple[int, ...]
    remeasure: int
    backend: str
    dataset: str = ""  # the dataset file chosen explicitly (--dataset); "" looks it up by name and GPU
    noise: str = "none"
    tuner_charge_s: float | None = None  # declared tuner time per proposal (None: measured)
    isolate: bool = False  # the tuner runs in its own sandboxed process (bat.run.isolation)
    prior: tuple[str, ...] = ()  # GPUs whose data of the same space the tuner gets (facts.others; transfer)
    devices: int = 1  # devices of the simulated clock (its compile workers: tuner.compile_workers)
    timeout_factor: float | None = None  # measurements past this x the best so far are stopped (bat.core.timeouts)

    @property
    def max_budget(self) -> int:
        return max(self.budgets)

    @functools.cached_property
    def run_id(self) -> str:
        """Stable identity: the same definition gives the same id, in any campaign (worked out once per spec).

        ``dataset``, ``noise``, the tuner's ``options`` and ``compile_workers``, ``tuner_charge_s``, ``isolate``,
        ``prior``, ``devices`` and ``timeout_factor`` enter the key only when they are not their defaults, so
        runs stored before those options existed keep their ids. A run on more than one compile worker or
        device also holds the clock's revision (bat.core.schedule.CLOCK_REVISION), so one stored before a
        change of the parallel clock is run again.
        """
        fields = spec_dict(self)
        if not fields["dataset"]:  # runs defined before datasets could be chosen keep their ids
            del fields["dataset"]
        if fields["noise"] == "none":
            del fields["noise"]
        if not fields["tuner"]["options"]:  # runs of a tuner at its defaults keep their ids
            del fields["tuner"]["options"]
        if fields["tuner"]["compile_workers"] == 1:
            del fields["tuner"]["compile_workers"]
        if fields["devices"] == 1:
            del fields["devices"]
        if "compile_workers" in fields["tuner"] or "devices" in fields:
            fields["clock"] = CLOCK_REVISION
        for name in ("tuner_charge_s", "isolate", "prior", "timeout_factor"):
            if not fields[name]:
                del fields[name]
        key = json.dumps(fields, sort_keys=True)
        return hashlib.sha256(key.encode()).hexdigest()[:20]


#: the fields ``spec_dict`` reads, in ``asdict``'s order
_RUN_FIELDS = tuple(f.name for f in fields(RunSpec))
_TUNER_FIELDS = tuple(f.name for f in fields(TunerSpec))


def spec_dict(spec: RunSpec) -> dict[str, Any]:
    """``dataclasses.asdict(spec)``, a fresh dict each call, made field by field: a spec's fields are text,
    numbers and tuples of them (immutable: shared, not copied), its tuner's too; a run's metadata and its id
    read it once per run, where ``asdict``'s deep copy cost about as much as summarising the run."""
    out: dict[str, Any] = {name: getattr(spec, name) for name in _RUN_FIELDS}
    out["tuner"] = {name: getattr(spec.tuner, name) for name in _TUNER_FIELDS}
    return out


@dataclass(frozen=True)
class Campaign:
    """Tuners x targets x budgets x repeats; see the module docstring for seeds and budgets."""

    tuners: tuple[TunerSpec, ...]
    targets: tuple[tuple[str, str], ...]  # (benchmark, GPU)
    budgets: tuple[int, ...]
    repeats: int
    seed: int = 0
    remeasure: int = 0  # re-measurements of each run's final configuration (0: none)
    backend: str = "replay"
    notes: tuple[str, ...] = field(default=())
    datasets: tuple[tuple[str, str, str], ...] = ()  # (benchmark, GPU, file) of targets chosen by dataset
    noise: str = "none"  # replay: objective drawn from the recorded repeats (bat.backends.replay)
    tuner_charge_s: float | None = None  # seconds charged per proposal as tuner time (deterministic time axis)
    isolate: bool = False  # each tuner in its own sandboxed process (bat.run.isolation)
    #: the transfer study's prior of each target: "" none, "all-others" (every other GPU with data of its
    #: space) or "vendor:NAME" (the other GPUs of that vendor only)
    prior: str = ""
    devices: int = 1  # devices of every run's simulated clock (bat.core.schedule)
    timeout_factor: float | None = None  # every run's timeout (bat.core.timeouts); None: none

    def __post_init__(self) -> None:
        from bat.core.schedule import MAX_WORKERS

        if not self.tuners:
            raise CampaignError("--tuners: at least one tuner is needed")
        for t in self.tuners:
            if not 1 <= t.compile_workers <= MAX_WORKERS:
                raise CampaignError(f"--compile-workers: 1 to {MAX_WORKERS}, got {t.compile_workers}")
        if not 1 <= self.devices <= MAX_WORKERS:
            raise CampaignError(f"--devices: 1 to {MAX_WORKERS}, got {self.devices}")
        try:
            check_factor(self.timeout_factor, "--timeout-factor")
        except ValueError as exc:
            raise CampaignError(str(exc)) from None
        labels = [t.label for t in self.tuners]
        if len(set(labels)) != len(labels):
            raise CampaignError(f"--tuners: labels must be unique, got {labels}")
        files: dict[str, str] = {}
        for label in labels:
            if (other := files.setdefault(file_label(label), label)) != label:
                raise CampaignError(f"--tuners: labels {other!r} and {label!r} share the file name "
                                    f"{file_label(label)!r} (plots, IOHprofiler folders); rename one")
        if not self.targets:
            raise CampaignError("--benchmarks: at least one benchmark with recorded data is needed")
        if not self.budgets or min(self.budgets) < 1:
            raise CampaignError(f"--budgets: positive integers are needed, got {list(self.budgets)}")
        if self.repeats < 1:
            raise CampaignError(f"--repeats must be >= 1, got {self.repeats}")
        # runs counted without building a tuner (a budget-agnostic one makes one run for all budgets: fewer)
        check_size(max(self.budgets), len(self.tuners) * len(self.targets) * len(set(self.budgets)) * self.repeats)
        if self.tuner_charge_s is not None and not 0 <= self.tuner_charge_s < float("inf"):
            raise CampaignError(f"--tuner-charge must be finite and >= 0, got {self.tuner_charge_s}")
        if self.remeasure < 0:
            raise CampaignError(f"remeasure must be >= 0, got {self.remeasure}")
        if self.backend not in ("replay", "live"):
            raise CampaignError(f"backend must be replay or live, got {self.backend!r}")
        if self.noise not in NOISE_MODES:
            raise CampaignError(f"--noise must be one of {', '.join(NOISE_MODES)}, got {self.noise!r}")
        if self.noise != "none" and self.backend != "replay":
            raise CampaignError(f"--noise {self.noise} needs the replay backend, not {self.backend}")
        if self.prior and self.prior != "all-others" and not self.prior.startswith("vendor:"):
            raise CampaignError(f"prior must be all-others or vendor:NAME, got {self.prior!r}")
        object.__setattr__(self, "budgets", tuple(sorted(set(self.budgets))))
        if len(set(self.targets)) != len(self.targets):
            raise CampaignError(f"a target appears twice: {[f'{b}/{g}' for b, g in self.targets]}")

    def dataset_for(self, benchmark: str, gpu: str) -> str:
        """The dataset file chosen for a target ("" when it is looked up by name and GPU)."""
        return next((f for b, g, f in self.datasets if (b, g) == (benchmark, gpu)), "")

    def prior_for(self, benchmark: str, gpu: str) -> tuple[str, ...]:
        """The GPUs whose data of the target's space its runs get as their prior (none without ``prior``)."""
        if not self.prior:
            return ()
        return _prior_gpus(benchmark, gpu, self.prior.removeprefix("vendor:") if self.prior != "all-others" else "")

    def run_seed(self, label: str, benchmark: str, gpu: str, repeat: int) -> int:
        """The seed of one repeat (derivation in the module docstring)."""
        return self._seed(_seed_words(label, benchmark, gpu), repeat)

    def _seed(self, words: list[int], repeat: int) -> int:
        return int(np.random.SeedSequence([self.seed, repeat, *words]).generate_state(1)[0])

    def runs(self) -> list[RunSpec]:
        """Every run of the campaign, longest first (so a pool's last tasks are short)."""
        out: list[RunSpec] = []
        for t in self.tuners:
            groups = [self.budgets] if self._prefixes(t) else [(b,) for b in self.budgets]
            for bench, gpu in self.targets:  # what the runs of one target share, worked out once
                words, dataset, prior = _seed_words(t.seed_label, bench, gpu), self.dataset_for(bench, gpu), \
                    self.prior_for(bench, gpu)
                for r in range(self.repeats):
                    seed = self._seed(words, r)
                    out.extend(RunSpec(t, bench, gpu, r, seed, g, self.remeasure, self.backend, dataset,
                                       noise=self.noise, tuner_charge_s=self.tuner_charge_s, isolate=self.isolate,
                                       prior=prior, devices=self.devices, timeout_factor=self.timeout_factor)
                               for g in groups)
        return sorted(out, key=lambda s: -s.max_budget)

    def _prefixes(self, t: TunerSpec) -> bool:
        """A run's trace prefixes answer the smaller budgets: a budget-agnostic tuner on the sequential clock
        (with proposals in flight, a longer run's first answers need not be a shorter run's) without timeouts
        (a timeout depends on the best found so far)."""
        return t.budget_agnostic and t.compile_workers == 1 and self.devices == 1 and self.timeout_factor is None

    def budget_policy(self) -> dict[str, str]:
        """Per tuner label: how its budgets were obtained, in words."""
        return {
            t.label: (f"one run at {max(self.budgets)} evaluations, smaller budgets from its trace "
                      "(the tuner declares itself budget-agnostic)" if self._prefixes(t) else "one run per budget")
            for t in self.tuners
        }

    def to_dict(self) -> dict[str, object]:
        return {
            "tuners": [asdict(t) for t in self.tuners],
            "oracles": [t.label for t in self.tuners if t.oracle],
            "targets": [list(t) for t in self.targets],
            "budgets": list(self.budgets),
            "repeats": self.repeats,
            "seed": self.seed,
            "remeasure": self.remeasure,
            "backend": self.backend,
            "noise": self.noise,
            "tuner_charge_s": self.tuner_charge_s,
            "isolate": self.isolate,
            "prior": self.prior,
            "compile_workers": sorted({t.compile_workers for t in self.tuners}),
            "devices": self.devices,
            "timeout_factor": self.timeout_factor,
            "notes": list(self.notes),
            "datasets": [list(d) for d in self.datasets],
            "budget_policy": self.budget_policy(),
            "seed_derivation": "SeedSequence([seed, repeat, *first four little-endian uint32 words of "
                               "sha256('label|benchmark|gpu')]).generate_state(1)[0]",
        }


@functools.cache
def _seed_words(label: str, benchmark: str, gpu: str) -> list[int]:
    """The four words of a run's seed that name its tuner and target (module docstring)."""
    digest = hashlib.sha256(f"{label}|{benchmark}|{gpu}".encode()).digest()
    return np.frombuffer(digest[:16], dtype="<u4").tolist()


def _prior_gpus(benchmark: str, gpu: str, vendor: str) -> tuple[str, ...]:
    from bat.registry import resolve_benchmark
    from bat.run.targets import prior_gpus

    return prior_gpus(resolve_benchmark(benchmark).space.space_hash, gpu, vendor)


def resolve_targets(benchmarks: list[str] | None, gpus: list[str] | None) -> tuple[tuple[str, str], ...]:
    """(benchmark, GPU) pairs with recorded data.

    ``benchmarks`` None or ``["all"]``: every benchmark with a dataset; a benchmark is a name or a
    space file by path (its datasets are the ones recorded on its space). ``gpus`` None: each
    benchmark's default GPU (``bat.registry.find_dataset``); ``["all"]``: every GPU recorded for
    it; otherwise the GPUs named (each must have data for every benchmark named).
    """
    from bat.registry import dataset_entries, datasets_of, find_dataset, resolve_benchmark

    if not benchmarks or benchmarks == ["all"]:
        benchmarks = sorted({e.meta.benchmark for e in dataset_entries()})
    out: list[tuple[str, str]] = []
    for name in benchmarks:
        bench = resolve_benchmark(name)
        h = bench.space.space_hash
        if not gpus:
            out.append((name, find_dataset(bench.name, space_hash=h).meta.gpu))
        elif gpus == ["all"]:
            out.extend((name, g) for g in sorted({e.meta.gpu for e in datasets_of(bench)}))
        else:
            out.extend((name, find_dataset(bench.name, g, space_hash=h).meta.gpu) for g in gpus)
    return tuple(out)


def dataset_targets(refs: list[str]) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str, str], ...]]:
    """Targets of datasets named by file or id: the (benchmark, GPU) pairs and their files."""
    from bat.registry import resolve_dataset

    entries = [resolve_dataset(r) for r in refs]
    return (tuple(e.key for e in entries),
            tuple((*e.key, str(e.path.resolve())) for e in entries))
