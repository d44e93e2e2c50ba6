"""Training and held-out datasets of a hypertune: named lists, or a pool split by benchmark or by GPU.

Leave-benchmarks-out puts every dataset of the named benchmarks in the
held-out set and the rest of the pool in the training set; leave-GPUs-out
does the same with GPUs. The two sets must be non-empty and disjoint (a
dataset seen in the search says nothing about generalisation).
"""

from __future__ import annotations

from dataclasses import dataclass

from bat.core.errors import BatError

#: ways to split a pool: the dataset attribute that must differ between the two sets
SPLITS = {"benchmarks": 0, "gpus": 1}


class HypertuneError(BatError, ValueError):
    """A hypertune that cannot be run as asked (names the option at fault)."""


@dataclass(frozen=True)
class Split:
    """(benchmark, GPU, file) of the training and held-out datasets, and how they were chosen."""

    train: tuple[tuple[str, str, str], ...]
    heldout: tuple[tuple[str, str, str], ...]
    how: str


def _entries(refs: list[str], where: str) -> list[tuple[str, str, str]]:
    from bat.registry import resolve_dataset

    out = []
    for ref in refs:
        try:
            e = resolve_dataset(ref)
        except BatError as exc:
            raise HypertuneError(f"{where} {ref}: {exc}") from exc
        out.append((e.meta.benchmark, e.meta.gpu, str(e.path.resolve())))
    return out


def make_split(*, train: list[str] | None = None, heldout: list[str] | None = None, pool: list[str] | None = None,
               split: str | None = None) -> Split:
    """The split named by ``train``/``heldout`` lists, or by ``split`` (``benchmarks:A,B`` or ``gpus:X``) of ``pool``.

    ``pool`` None or empty: every registered dataset.
    """
    if split:
        if train or heldout:
            raise HypertuneError("--split: give --split (with --pool) or --train/--heldout, not both")
        kind, _, names = split.partition(":")
        chosen = {n.strip() for n in names.split(",") if n.strip()}
        if kind not in SPLITS or not chosen:
            raise HypertuneError(f"--split {split!r}: expected benchmarks:NAME[,NAME] or gpus:NAME[,NAME]")
        if pool:
            entries = _entries(pool, "--pool")
        else:
            from bat.registry import dataset_entries

            entries = [(e.meta.benchmark, e.meta.gpu, str(e.path.resolve())) for e in dataset_entries()]
        at = SPLITS[kind]
        unknown = chosen - {e[at] for e in entries}
        if unknown:
            raise HypertuneError(f"--split {split!r}: {', '.join(sorted(unknown))} not in the pool")
        out = [e for e in entries if e[at] in chosen]
        kept = [e for e in entries if e[at] not in chosen]
        result = Split(tuple(kept), tuple(out), f"leave-{kind}-out: {', '.join(sorted(chosen))} held out")
    else:
        result = Split(tuple(_entries(train or [], "--train")), tuple(_entries(heldout or [], "--heldout")),
                       "named training and held-out datasets")
    if not result.train:
        raise HypertuneError("--train: the training set is empty")
    if not result.heldout:
        raise HypertuneError("--heldout: the held-out set is empty")
    for where, part in (("--train", result.train), ("--heldout", result.heldout)):
        keys = [(b, g) for b, g, _ in part]
        twice = sorted({f"{b}/{g}" for b, g in keys if keys.count((b, g)) > 1})
        if twice:
            raise HypertuneError(f"{where}: {', '.join(twice)} appears twice")
    both = ({f"{b}/{g}" for b, g, _ in result.train} & {f"{b}/{g}" for b, g, _ in result.heldout}
            or {f for *_, f in result.train} & {f for *_, f in result.heldout})
    if both:
        raise HypertuneError(f"--heldout: {sorted(both)[0]} is also in the training set")
    return result
