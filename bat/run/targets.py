"""What a run tunes: a space behind a backend, chosen from the command line's words.

``make_target`` is the one place that turns "benchmark B, GPU G, backend
auto/replay/live/emulated/command" into a ``Target``: live on a GPU when asked
and available, the benchmark's own commands when its space file has a command
section, replay of a recorded dataset otherwise; emulated (the kernel on the
CPU, correctness only) when asked. The backends know nothing
of this choice; this module depends on them, never the other way round.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from bat.backends.emulated import CORRECTNESS_ONLY
from bat.backends.replay import NOISE_MODES, ReplayBackend
from bat.core.benchmark import Benchmark, ProblemSize
from bat.core.dataset import Dataset
from bat.core.errors import BackendError, SpaceMismatchError, UnknownNameError
from bat.core.facts import TargetFacts
from bat.core.gpus import gpu_facts, known_cuda_cores
from bat.core.problem import Backend
from bat.core.space import SearchSpace
from bat.registry import find_dataset, resolve_benchmark
from bat.run.identity import measurement_identity


@dataclass
class Target:
    """A space behind a backend, plus what is known of its optimum and where the data came from."""

    benchmark: str
    gpu: str
    space: SearchSpace
    backend: Backend
    best_known_ms: float | None
    dataset: Dataset | None = None  # the recorded data a replay target answers from
    dataset_path: Path | None = None
    facts: TargetFacts = field(default_factory=TargetFacts)  # what a tuner may know (Problem.facts)
    identity: str = ""  # what its measurements depend on (bat.run.identity); "" for a replay

    @property
    def data_hash(self) -> str:
        """The hash of the space its data is recorded on: the space's own, or the whole space of a slice."""
        return (self.space.whole or self.space).space_hash


def launch_threads(bench: Benchmark | None, space: SearchSpace,
                   size: ProblemSize | None = None) -> Callable | None:
    """The threads-per-configuration function of ``bench``'s launch geometry, when it has one for ``space``."""
    if bench is None or not bench.launch or bench.space.space_hash != space.space_hash:
        return None
    return partial(bench.threads, size=size.values if size else None)


def replay_target(benchmark: str | Benchmark, gpu: str | None = None, dataset: Dataset | None = None,
                  *, path: Path | None = None, noise: str = "none", noise_seed: int = 0) -> Target:
    """A replay target: the dataset recorded on the benchmark's space for ``gpu`` (matched by space hash),
    or the dataset given (by object or ``path``).

    A dataset given for a Benchmark object may have been recorded on another space with the same
    parameters (a user's copy with another constraint): the Benchmark's space is used as written and
    only the recorded configurations it allows are ever asked for. ``noise``: see ReplayBackend. Its
    facts (bat.core.facts): the dataset's GPU, its public specification and core count when the GPU is
    known (bat.core.gpus), the benchmark's launch geometry; never the dataset itself.
    """
    if dataset is None and path is not None:
        dataset = Dataset.load(path)
    if dataset is None:
        bench = benchmark if isinstance(benchmark, Benchmark) else resolve_benchmark(benchmark, gpu)
        entry = find_dataset(bench.name, gpu, space_hash=bench.space.space_hash)
        dataset, path = Dataset.load(entry.path), entry.path
        space = bench.space
    elif isinstance(benchmark, Benchmark):
        bench, space = benchmark, benchmark.space
    else:
        bench = dataset.meta.load_benchmark()
        space = bench.space
    if dataset.meta.slice:  # data of a slice: the tuner searches the slice, where every configuration was measured
        space = space.sliced(dataset.meta.slice)
    dataset.check_space(space, same_hash=False)
    facts = TargetFacts(gpu=dataset.meta.gpu, cuda_cores=known_cuda_cores(dataset.meta.gpu),
                        threads=launch_threads(bench, space), measures_counters=bool(dataset.counters),
                        gpu_facts=gpu_facts(dataset.meta.gpu))
    backend = ReplayBackend(dataset, noise=noise, noise_seed=noise_seed)
    return Target(dataset.meta.benchmark, dataset.meta.gpu, space, backend, best_in(dataset, space),
                  dataset, path, facts)


#: a prior made of every other GPU with data of the target's space
ALL_OTHERS = "all-others"


def with_prior(target: Target, prior: Mapping[str, Dataset]) -> Target:
    """``target`` whose facts carry ``prior``: other GPUs' measured data of its space, by GPU id.

    A dataset recorded on another space than the target's is refused (its configurations would not be
    the target's); so is the target's own GPU (``TargetFacts`` refuses it). Nothing else changes: the
    tuner still never sees the target's data.
    """
    mine = target.data_hash
    for gpu, data in prior.items():
        if data.meta.space_hash != mine:
            raise SpaceMismatchError(f"prior {gpu}: its dataset of {data.meta.benchmark} was recorded on space "
                                     f"{data.meta.space_hash[:12]}, the target's space ({target.benchmark}) is "
                                     f"{mine[:12]}; a prior must share the target's space")
    return replace(target, facts=replace(target.facts, others=dict(prior)))


def prior_gpus(space_hash: str, gpu: str, vendor: str = "") -> tuple[str, ...]:
    """Every GPU but ``gpu`` with a dataset recorded on the space ``space_hash``, of ``vendor`` when given."""
    from bat.registry import dataset_entries

    vendors = {e.meta.gpu: e.meta.vendor for e in dataset_entries() if e.meta.space_hash == space_hash}
    return tuple(sorted(g for g, v in vendors.items() if g != gpu and (not vendor or v.upper() == vendor.upper())))


def load_prior(target: Target, refs: Sequence[str]) -> dict[str, Dataset]:
    """The datasets ``bat run --prior`` names: ``all-others``, or GPU ids (their data recorded on the target's
    space) and dataset files or ids, each checked by ``with_prior``."""
    from bat.registry import dataset_entries, resolve_dataset

    h = target.data_hash
    if list(refs) == [ALL_OTHERS]:
        refs = prior_gpus(h, target.gpu)
        if not refs:
            raise BackendError(f"--prior {ALL_OTHERS}: no other GPU has data of the space of {target.benchmark}")
    out: dict[str, Dataset] = {}
    every = dataset_entries()
    for ref in refs:
        mine = [e for e in every if e.meta.gpu == ref and e.meta.space_hash == h]
        named = [e for e in every if e.meta.gpu == ref and e.meta.benchmark == target.benchmark]
        if not mine and not named and any(e.meta.gpu == ref for e in every):
            raise BackendError(f"--prior {ref}: GPU {ref} has no data of {target.benchmark} (space {h[:12]})")
        entry = (mine or named)[0] if mine or named else resolve_dataset(ref)  # else a dataset file or id
        data = Dataset.load(entry.path)
        out[data.meta.gpu] = data
    return out


def best_in(dataset: Dataset, space: SearchSpace) -> float | None:
    """Best objective among the dataset's ok rows that ``space`` allows (None when there is none)."""
    ok = dataset.ok
    if ok.empty:
        return None
    valid = space.is_valid(space.encode(ok[list(space.names)]))
    times = ok["objective_ms"].to_numpy(dtype=float)[valid]
    return float(times.min()) if len(times) else None


def command_target(bench: Benchmark, *, small: bool = False) -> Target:
    """A target that compiles and runs a command benchmark's program on this host."""
    from bat.backends.command import command_backend
    from bat.run.recording.command import host_id

    size = bench.size("small" if small else None).values
    return Target(bench.name, host_id(), bench.space, command_backend(bench, small=small), None,
                  identity=measurement_identity(bench, size))


def live_target(bench: Benchmark, size: ProblemSize | None = None, *, gpu: str | None = None,
                counters: bool = False) -> Target:
    """A target on this machine's GPU (no best known time: nothing is replayed). Needs CuPy."""
    from bat.backends.live.backend import LiveBackend
    from bat.backends.live.device import short_gpu_name
    from bat.backends.live.session import LiveSession

    session = LiveSession(bench, size or bench.size())
    name = gpu or short_gpu_name(session.info["gpu_name"])
    facts = TargetFacts(gpu=name, cuda_cores=session.info.get("cuda_cores"),
                        threads=launch_threads(bench, bench.space, session.size), measures_counters=counters)
    return Target(bench.name, name, bench.space, LiveBackend(session, counters=counters), None, facts=facts,
                  identity=measurement_identity(bench, session.size.values))


def emulated_target(bench: Benchmark, size: ProblemSize | None = None) -> Target:
    """A target whose kernel runs on this CPU under sanitizers: statuses only, never a time."""
    from bat.backends.emulated.backend import EmulatedBackend
    from bat.backends.emulated.session import EmulatedSession

    if not bench.kernel:
        raise BackendError(f"{bench.path}: benchmark {bench.name} has no CUDA kernel to emulate")
    size = size or bench.size("emulation")
    session = EmulatedSession(bench, size)
    return Target(bench.name, "emulated", bench.space, EmulatedBackend(session), None,
                  identity=measurement_identity(bench, size.values))


@dataclass(frozen=True)
class TargetRequest:
    """What the command line asked for beyond the benchmark and the backend's name.

    ``dataset``: a dataset file chosen explicitly (``--dataset``); only the replay backend uses it.
    """

    gpu: str | None = None
    size: ProblemSize | None = None
    counters: bool = False
    dataset: Path | None = None
    noise: str = "none"  # replay only: objective drawn from the recorded repeats (ReplayBackend)
    noise_seed: int = 0

    def __post_init__(self) -> None:
        if self.noise not in NOISE_MODES:
            raise UnknownNameError("replay noise mode", self.noise, list(NOISE_MODES))


@dataclass(frozen=True)
class Offer:
    """A backend's answer to ``auto``: it can serve this benchmark and request, how keenly, and why."""

    priority: int  # the highest offer serves; ties go to the backend name first in order
    why: str  # said on the run's first line ("no GPU found": the line goes on with what the target is)


@dataclass(frozen=True)
class BackendProvider:
    """A backend's entry in the ``bat.backends`` group: how to make its target, and whether it serves ``auto``.

    ``make(bench, request)`` builds the Target; ``offer(bench, request)`` answers ``auto`` with an Offer,
    or None when the backend cannot serve (no device, no data, no kernel) or never serves ``auto``
    (emulated: correctness only). An installed package adds a backend that takes part in ``auto`` by
    declaring one of these as an entry point.
    """

    make: Callable[[Benchmark, TargetRequest], Target]
    offer: Callable[[Benchmark, TargetRequest], Offer | None]
    why: str  # what a run on it says when named explicitly


def _offer_replay(bench: Benchmark, request: TargetRequest) -> Offer:
    if request.dataset is not None:
        return Offer(100, "the dataset chosen")
    return Offer(10, "no GPU found")  # the fallback: without data, its target says what is missing


def _offer_command(bench: Benchmark, request: TargetRequest) -> Offer | None:
    return Offer(80, "running its commands on this host") if bench.command_spec is not None else None


def _offer_live(bench: Benchmark, request: TargetRequest) -> Offer | None:
    from bat.backends.live.device import gpu_available

    if not bench.kernel.get("runner") or not gpu_available():  # kernel-less benchmarks (coulomb) replay
        return None
    return Offer(60, "live on the GPU" + (", with Nsight Compute counters" if request.counters else ""))


def _replay(bench: Benchmark, request: TargetRequest) -> Target:
    """The dataset chosen, else the one recorded on the benchmark's space and GPU."""
    return replay_target(bench, request.gpu, path=request.dataset, noise=request.noise, noise_seed=request.noise_seed)


def _live(bench: Benchmark, request: TargetRequest) -> Target:
    return live_target(bench, request.size, gpu=request.gpu, counters=request.counters)


def _emulated(bench: Benchmark, request: TargetRequest) -> Target:
    if request.counters:
        raise BackendError("the emulated backend measures nothing, performance counters included; "
                           "a tuner that needs counters runs live or on recorded data")
    return emulated_target(bench, request.size)


def _command(bench: Benchmark, request: TargetRequest) -> Target:
    if bench.command_spec is None:
        raise BackendError(f"{bench.path}: benchmark {bench.name} has no command section")
    return command_target(bench, small=request.size is not None and request.size.name == "small")


#: the four backends of this project (pyproject.toml declares them in the ``bat.backends`` group)
replay_backend = BackendProvider(_replay, _offer_replay, "--backend replay")
live_backend = BackendProvider(_live, _offer_live, "live on the GPU")
emulated_backend = BackendProvider(_emulated, lambda bench, request: None, CORRECTNESS_ONLY)
command_backend = BackendProvider(_command, _offer_command, "running its commands on this host")


def choose_backend(bench: Benchmark, request: TargetRequest) -> tuple[str, str]:
    """``auto``: the registered backend with the highest offer for ``bench`` and ``request``, and why."""
    from bat.registry import backend_names, backend_provider

    offers = []
    for name in backend_names():
        offer = backend_provider(name).offer(bench, request)
        if offer is not None:
            offers.append((-offer.priority, name, offer.why))
    if not offers:
        raise BackendError(f"no registered backend can serve {bench.name} (`bat list backends`)")
    _, name, why = min(offers)
    return name, why


def make_target(benchmark: str | Benchmark | None, *, backend: str = "auto",
                request: TargetRequest | None = None) -> tuple[Target, str]:
    """The target of ``bat run``; the second value says which backend was chosen and why.

    ``benchmark``: a Benchmark, a registered name, a space file by path, the name of imported
    datasets, or None when ``request.dataset`` names the data (its stored space is used).
    ``auto`` asks every registered backend for its Offer (``choose_backend``): among this project's,
    replay when a dataset was chosen; the benchmark's commands when its space file has a command
    section; live on a GPU when the benchmark has a CUDA kernel runner and a GPU is present; replay
    otherwise. Any other name is looked up in the ``bat.backends`` registry.
    """
    from bat.registry import backend_provider

    request = request or TargetRequest()
    if benchmark is None:
        if request.dataset is None:
            raise BackendError("name a benchmark (or a space file), or a dataset to replay")
        bench = Dataset.load(request.dataset).meta.load_benchmark()
    else:
        bench = benchmark if isinstance(benchmark, Benchmark) else resolve_benchmark(benchmark, request.gpu)
    if request.dataset is not None and backend not in ("auto", "replay"):
        raise BackendError(f"--dataset replays recorded data; it cannot run on backend {backend!r}")
    if backend == "auto":
        backend, why = choose_backend(bench, request)
        target = backend_provider(backend).make(bench, request)
    else:
        provider = backend_provider(backend)
        target, why = provider.make(bench, request), provider.why
        if backend == "live" and request.counters:
            why += ", with Nsight Compute counters"
    if request.noise != "none" and not getattr(target.backend, "recorded", False):  # every backend has with_noise
        raise BackendError(f"--noise {request.noise}: only the replay backend draws from recorded repeats, "
                           f"this run uses {target.backend.name}")
    dataset = target.dataset
    if dataset is not None and dataset.meta.slice:
        why += (" (data of a slice of the space: " + ", ".join(f"{k} = {v!r}" for k, v in dataset.meta.slice.items())
                + " fixed at import; only that slice is searched)")
    elif dataset is not None and dataset.meta.space_hash != target.space.space_hash:
        why += (f" (dataset recorded on another space, hash {dataset.meta.space_hash[:12]}; the space of "
                f"{bench.path} has {target.space.space_hash[:12]}: only its allowed configurations are asked)")
    return target, why
