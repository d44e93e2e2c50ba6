"""Time of one profile-search step when scoring a 10^5-configuration space (target: under 50 ms).

A step is what ``ProfileSearch`` does between profiles: mark evaluated
candidates, bottlenecks and reaction of p, raw scores of every candidate,
normalised weights, and the weighted draw of 5 without replacement. The
candidate counters are the Coulomb data's 210 real counter rows repeated
to 10^5 rows (timings do not depend on the values); the peer in the same
run is drawing 5 uniform valid configurations of the same space
(``SearchSpace.sample_valid``), the random step's cost.

Usage: .venv/bin/python bench/profile_scoring.py
"""

from __future__ import annotations

import platform
import time

import numpy as np

from bat.core.counters import METRICS
from bat.core.dataset import Dataset
from bat.core.spacefile import space_from_dict
from bat.registry import find_dataset
from bat.tuner_adapters.profile.bottlenecks import REACTED, Constants, bottlenecks, reaction, scores, weights
from bat.tuner_adapters.profile.sources import reacted_matrix, short_columns

N = 100_000
REPEATS = 50


def main() -> None:
    space = space_from_dict({"name": "bench", "problem_size": {}, "constraints": [],
                             "parameters": [{"name": f"p{i}", "values": list(range(10))} for i in range(5)]})
    ds = Dataset.load(find_dataset("coulomb", "RTX_2080_Ti").path)
    short = short_columns(ds.frame)
    real = reacted_matrix(short, ds.frame["threads"].to_numpy(float))
    matrix = np.asfortranarray(real[np.arange(N) % len(real)])
    ids = space.valid_ids()
    assert len(ids) == N
    rng = np.random.default_rng(0)
    evaluated = rng.choice(N, size=500, replace=False)
    k = Constants()
    pc = {s: float(short[s].iloc[0]) for s in METRICS}

    def step() -> np.ndarray:
        fresh = ~np.isin(ids, evaluated)
        delta = reaction(bottlenecks(pc, float(ds.frame["threads"].iloc[0]), 4352), k)
        raw = scores(np.array([delta[c] for c in REACTED]), matrix, matrix[0])[fresh]
        w = weights(raw, k)
        return rng.choice(int(fresh.sum()), size=5, replace=False, p=w / w.sum())

    def peer() -> np.ndarray:
        return space.sample_valid(5, rng)

    for fn in (step, peer):
        fn()
    timings = {}
    for name, fn in (("step", step), ("peer", peer)):
        t = []
        for _ in range(REPEATS):
            start = time.perf_counter()
            fn()
            t.append(time.perf_counter() - start)
        timings[name] = float(np.median(t))
    print(f"scoring step over {N} configurations: median {timings['step'] * 1e3:.2f} ms "
          f"({REPEATS} repeats); uniform random step (peer): {timings['peer'] * 1e3:.3f} ms; "
          f"ratio {timings['step'] / timings['peer']:.1f}x")
    print(f"machine: {platform.machine()}, Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}")


if __name__ == "__main__":
    main()
