"""A whole hypertune: checks, the search on the training set, the final comparison on both sets, the outputs.

``plan`` checks everything a user gives (tuner and its declared options,
ranges, searcher, split, budget) before anything runs. ``hypertune`` then

1. evaluates the default setting and the settings the searcher proposes
   (``search.next_batch``), each a unit on the training set
   (``units.evaluate_unit``), until ``settings`` have been tried;
2. takes the setting with the best training score and evaluates it and the
   defaults again, with fresh seeds (no winner's curse from the search's own
   runs) and ``final_repeats`` runs per dataset, on the training set and on
   the held-out set;
3. reports per set the two scores with their intervals, the improvement
   (run by run on the same seeds) with its interval, and the generalisation
   gap: the improvement on the training set minus that on the held-out set.

Every unit is stored when it finishes (``store.UnitStore``); a rerun of the
same hypertune into the same folder reuses them and runs only the rest.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bat.analysis.hypertune.hub import HubBruteForce, agreement, read_hub
from bat.analysis.hypertune.search import next_batch
from bat.analysis.hypertune.space import declared, narrow, search_space
from bat.analysis.hypertune.splits import HypertuneError, Split
from bat.analysis.hypertune.store import UnitStore
from bat.analysis.hypertune.units import Executor, Unit, make_unit, paired_difference
from bat.campaign.design import check_size
from bat.core.hyperparams import HyperParam, write_options_file

SEARCHERS = {"random": "reference:random", "grid": "reference:grid", "tpe": "optuna"}
OPTIONS_FILE = "best-options.json"
RESULTS_FILE = "hypertune.json"


@dataclass(frozen=True)
class Plan:
    """A checked hypertune."""

    tuner: str
    params: tuple[HyperParam, ...]
    split: Split
    searcher: str = "random"
    settings: int = 30
    budget: int = 100
    repeats: int = 5
    final_repeats: int = 10
    seed: int = 0
    points: int = 8
    batch: int = 0  # settings proposed at a time (0: the number of workers, or of the Dask cluster's threads)
    hub: HubBruteForce | None = None  # the hub's brute force: its grid is searched, its scores compared

    @property
    def searcher_tuner(self) -> str:
        return SEARCHERS.get(self.searcher, self.searcher)


def plan(*, tuner: str, split: Split, searcher: str = "random", params: list[str] | None = None,
         ranges: list[str] | None = None, settings: int = 30, budget: int = 100, repeats: int = 5,
         final_repeats: int = 10, seed: int = 0, points: int = 8, batch: int = 0,
         hub: str | Path | None = None) -> Plan:
    """A ``Plan`` once every input is checked (HypertuneError naming the first bad one); ``hub``: the FAIR
    Benchmark Hub's brute force of the tuner's strategy (bat.analysis.hypertune.hub)."""
    from bat.core.errors import BatError
    from bat.registry import make_tuner

    try:
        make_tuner(tuner)
    except BatError as exc:
        raise HypertuneError(f"--tuner {tuner}: {exc}") from exc
    chosen = narrow(declared(tuner), params, ranges or [])
    brute = None
    if hub is not None:
        if params or ranges:
            raise HypertuneError("--hub: the hub's file chooses the options and their values; give no --params "
                                 "or --range with it")
        brute = read_hub(hub, tuner, chosen)
        chosen = brute.narrowed(chosen)
    if not chosen:
        raise HypertuneError("--params: no hyper-parameter left to tune")
    try:
        make_tuner(SEARCHERS.get(searcher, searcher))
    except BatError as exc:
        raise HypertuneError(f"--search {searcher}: {exc} (or one of {', '.join(SEARCHERS)})") from exc
    for name, value, low in (("--settings", settings, 1), ("--budget", budget, 1), ("--repeats", repeats, 2),
                             ("--final-repeats", final_repeats, 2), ("--points", points, 2), ("--batch", batch, 0)):
        if value < low:
            raise HypertuneError(f"{name} must be >= {low}, got {value}")
    # the comparisons' own limits, checked here before OUT/units.sqlite is opened: an inner comparison, and the
    # final one (the best and the defaults on every dataset)
    check_size(budget, repeats * len(split.train), "--budget", "--repeats")
    check_size(budget, 2 * final_repeats * (len(split.train) + len(split.heldout)), "--budget", "--final-repeats")
    _check_data(split)
    return Plan(tuner, chosen, split, searcher, settings, budget, repeats, final_repeats, seed, points, batch, brute)


def _check_data(split: Split) -> None:
    """Every dataset gives the score its baseline (no valid measurement, or one time for all, is refused)
    before OUT/units.sqlite is opened (a one-row dataset made the store, then failed in the first unit)."""
    from bat.analysis.score import target_baseline
    from bat.campaign.execute import load_target

    for bench, gpu, path in (*split.train, *split.heldout):
        target = load_target(bench, gpu, "replay", path)
        if target.dataset is not None:
            target_baseline(target.dataset, target.space)


@dataclass
class Outcome:
    """What a hypertune found and wrote."""

    tried: list[dict[str, Any]]
    best: dict[str, Any]
    defaults: dict[str, Any]
    final: dict[str, Any]
    hub: dict[str, Any] | None = None  # the agreement with the hub's brute force (bat.analysis.hypertune.hub)
    paths: dict[str, Path] = field(default_factory=dict)
    executed: int = 0
    reused: int = 0


#: phase ("search" or "final"), units done and due in it, best training score, seconds left in it
Progress = Callable[[str, int, int, float | None, float | None], None]


def setting_of(params: tuple[HyperParam, ...], config: dict[str, Any]) -> dict[str, Any]:
    """A point of the discretised space as typed option values (bools back from 0/1)."""
    out = {}
    for p in params:
        v = config[p.name]
        v = v.item() if isinstance(v, np.generic) else v
        out[p.name] = bool(v) if p.kind == "bool" else int(v) if p.kind == "int" else \
            float(v) if p.kind == "float" else v
    return out


def hypertune(p: Plan, out: str | Path, *, workers: int = 1, scheduler: str | None = None,
              progress: Progress | None = None, report: bool = True) -> Outcome:
    """Run the plan into ``out`` (see the module docstring); finished units there are reused."""
    from bat.core.atomic import check_output_folder
    from bat.core.locking import FolderLock

    out = check_output_folder(Path(out), what="--out")
    with FolderLock(out, "bat hypertune --out"):
        store = UnitStore(out)
        executor = Executor(workers, scheduler)
        try:
            outcome = _run(p, out, store, executor, executor.slots, progress)
        except BaseException:
            executor.close(abort=True)
            store.close()
            raise
        executor.close()
        store.close()
        outcome.paths = _write(p, out, outcome, report)
    return outcome


class _Tally:
    """Units done in the current phase (the search, then the final comparison), each phase counted against its
    own exact total, the best score so far and the time per unit measured in this phase."""

    def __init__(self, phase: str, total: int, progress: Progress | None) -> None:
        self.progress = progress
        self.executed, self.reused, self.best = 0, 0, None
        self.begin(phase, total)

    def begin(self, phase: str, total: int) -> None:
        self.phase, self.total, self.done, self.fresh = phase, total, 0, 0
        self.start = time.perf_counter()
        self.tell()

    def add(self, result: dict[str, Any], fresh: bool, search: bool) -> None:
        self.done += 1
        self.fresh += fresh
        self.executed += fresh
        self.reused += not fresh
        if search and result["score"] is not None:
            self.best = result["score"] if self.best is None else max(self.best, result["score"])
        self.tell()

    def tell(self) -> None:
        if self.progress is None:
            return
        left = None
        if self.fresh:
            left = (time.perf_counter() - self.start) / self.fresh * max(0, self.total - self.done)
        self.progress(self.phase, self.done, max(self.total, self.done), self.best, left)


def _run(p: Plan, out: Path, store: UnitStore, executor: Executor, workers: int,
         progress: Progress | None) -> Outcome:
    grid_total = p.settings if p.searcher_tuner == "reference:grid" else None
    space = search_space(p.tuner, p.params, p.points, grid_total, with_defaults=p.hub is None)
    defaults = {q.name: q.default for q in p.params}
    # the defaults and up to ``settings`` more (the searcher may stop early: the total is then lowered)
    tally = _Tally("search", min(p.settings, space.count_valid()) + 1, progress)
    tried: dict[str, dict[str, Any]] = {}

    def unit(setting: dict[str, Any], datasets: tuple, repeats: int, seed: int, phase: str) -> Unit:
        return make_unit(p.tuner, setting, datasets, p.budget, repeats, seed, phase)

    def evaluate(units: list[Unit], search: bool) -> list[dict[str, Any]]:
        results, todo = {}, []
        for u in dict.fromkeys(units):  # the best setting may be the defaults: one unit, run once
            stored = store.get(u.key)
            if stored is not None:
                results[u.key] = stored
                tally.add(stored, False, search)
            else:
                todo.append(u)
        for r in executor.run(todo) if todo else ():
            store.put(r)
            results[r["key"]] = r
            tally.add(r, True, search)
        return [results[u.key] for u in units]

    def known(config: dict[str, Any]) -> float | None:
        u = unit(setting_of(p.params, config), p.split.train, p.repeats, p.seed, "search")
        if u.key in tried:
            r = tried[u.key]
        else:
            stored = store.get(u.key)
            if stored is None:
                return None
            r = tried[u.key] = stored
            tally.add(r, False, True)
        return float("nan") if r["score"] is None else float(r["score"])

    first = evaluate([unit(defaults, p.split.train, p.repeats, p.seed, "search")], True)[0]
    tried[first["key"]] = first
    batch = p.batch or workers
    while (left := p.settings + 1 - len(tried)) > 0:  # the defaults and ``settings`` more
        configs = next_batch(p.searcher_tuner, space, p.settings, min(batch, left), p.seed, known)
        if not configs:
            tally.total = tally.done
            break
        for r in evaluate([unit(setting_of(p.params, c), p.split.train, p.repeats, p.seed, "search")
                           for c in configs], True):
            tried[r["key"]] = r
    scored = [r for r in tried.values() if r["score"] is not None]
    if not scored:
        raise HypertuneError(f"--tuner {p.tuner}: no setting gave a score on the training set")
    best_result = max(scored, key=lambda r: (r["score"], r["key"] == first["key"]))
    best = dict(best_result["unit"]["setting"])
    final_seed = p.seed + 1  # fresh runs for the final comparison
    final_units = [unit(s, d, p.final_repeats, final_seed, "final")
                   for d in (p.split.train, p.split.heldout) for s in (best, defaults)]
    tally.begin("final", len(set(final_units)))  # the best may be the defaults: one unit per set
    finals = evaluate(final_units, False)
    final: dict[str, Any] = {}
    for name, (b, d) in (("train", finals[0:2]), ("heldout", finals[2:4])):
        final[name] = {"best": _summary(b), "defaults": _summary(d),
                       "improvement": paired_difference(b["per_target"], d["per_target"], p.seed)}
    gi, hi = final["train"]["improvement"]["score"], final["heldout"]["improvement"]["score"]
    final["generalisation_gap"] = None if gi is None or hi is None else gi - hi
    order = sorted(tried.values(), key=lambda r: r["score"] if r["score"] is not None else -1e300, reverse=True)
    listed = [{"setting": dict(r["unit"]["setting"]), **_summary(r)} for r in order]
    hub = None
    if p.hub is not None:
        train = ", ".join(f"{b}/{g}" for b, g, _ in p.split.train)
        hub = agreement(p.hub, listed, f"mean over the training datasets {train}, {p.repeats} runs of "
                                       f"{p.budget} evaluations each")
    return Outcome(listed, best, defaults, final, hub, executed=tally.executed, reused=tally.reused)


def _summary(r: dict[str, Any]) -> dict[str, Any]:
    out = {k: r[k] for k in ("score", "ci_low", "ci_high", "per_target", "wall_s")}
    if r.get("error"):
        out["error"] = r["error"]
    return out


def _write(p: Plan, out: Path, o: Outcome, report: bool) -> dict[str, Path]:
    from bat.core.atomic import write_text

    paths = {"options": out / OPTIONS_FILE, "json": out / RESULTS_FILE}
    held = o.final["heldout"]["improvement"]
    write_options_file(paths["options"], p.tuner, o.best,
                       note=f"best of {len(o.tried)} settings on {len(p.split.train)} training datasets; held-out "
                            f"improvement over the defaults {_num(held['score'])} "
                            f"[{_num(held['ci_low'])}, {_num(held['ci_high'])}]")
    body = {"plan": {**{k: v for k, v in asdict(p).items() if k not in ("params", "split", "hub")},
                     "params": [asdict(q) for q in p.params], "searcher_tuner": p.searcher_tuner,
                     "split": {"how": p.split.how, "train": [f"{b}/{g}" for b, g, _ in p.split.train],
                               "heldout": [f"{b}/{g}" for b, g, _ in p.split.heldout]},
                     "score": "methodology score on evaluations (bat.analysis.score), mean over datasets, "
                              "95 % bootstrap interval"},
            "best": o.best, "defaults": o.defaults, "final": o.final, "tried": o.tried, "hub": o.hub,
            "units": {"executed": o.executed, "reused": o.reused}}
    write_text(paths["json"], json.dumps(body, indent=2, default=str) + "\n")
    if report:
        from bat.analysis.hypertune.report import write_report

        paths.update(write_report(out, body))
    return paths


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.3f}"
