"""Replay charges the recorded compile + verification + benchmark time, says where it falls back,
and can draw each evaluation's objective from the recorded repeats (seeded, order-independent)."""

from __future__ import annotations

import numpy as np
import pytest

from bat.backends.replay import ReplayBackend
from bat.core.costs import recorded_costs
from bat.core.dataset import Dataset, DatasetMeta, make_frame
from bat.core.errors import BackendError, DatasetError, UnknownNameError
from bat.run.targets import TargetRequest, make_target, replay_target


def _dataset(rows, extra_cols=None):
    frame = make_frame(("x",), rows)
    for col, values in (extra_cols or {}).items():
        frame[col] = values
    return Dataset(frame, DatasetMeta(benchmark="toy", space_hash="h", gpu="G"), ("x",))


def test_costs_charge_compile_verify_and_benchmark_and_name_each_fallback():
    ds = _dataset([
        {"x": 1, "objective_ms": 2.0, "times_ms": [2.0, 2.0], "compile_ms": 100.0, "benchmark_ms": 40.0},
        {"x": 2, "objective_ms": 3.0, "times_ms": [3.0, 3.0]},  # no compile, no benchmark: repeats
        {"x": 3, "objective_ms": 5.0},  # nothing but the objective
    ], {"kt_verification_time": [10.0, np.nan, np.nan]})
    costs = recorded_costs(ds.frame)
    assert costs.cost_s == pytest.approx([0.150, 0.006, 0.005])
    assert (costs.compile_recorded, costs.verify_recorded, costs.benchmark_recorded) == (1, 1, 1)
    assert (costs.from_repeats, costs.from_objective) == (1, 1) and costs.falls_back
    text = costs.describe()
    assert "1 rows without benchmark time are charged the sum of their repeated kernel times" in text
    assert "charged their objective alone" in text
    assert ReplayBackend(ds).evaluate({"x": 1}).cost_s == pytest.approx(0.150)


def test_shipped_kernel_tuner_data_has_every_part_and_coulomb_falls_back():
    full = replay_target("pnpoly", "RTX_3090").backend.costs
    assert not full.falls_back and full.verify_recorded == full.rows
    assert "falls back" not in full.describe()
    ktt = replay_target("coulomb").backend.costs
    assert ktt.falls_back and ktt.from_repeats == ktt.rows


def test_noise_draws_from_recorded_repeats_reproducibly_and_order_independently():
    target = replay_target("pnpoly", "RTX_3090")
    base = target.backend
    frame = base.dataset.frame
    rows = frame.index[(frame["status"] == "ok") & (frame["times_ms"].map(len) >= 5)][:40]
    configs = [{p: frame.at[i, p] for p in base.dataset.parameters} for i in rows]
    for mode in ("repeat", "bootstrap"):
        a = base.with_noise(mode, 7)
        first = [a.evaluate(c).objective_ms for c in configs]
        again = [base.with_noise(mode, 7).evaluate(c).objective_ms for c in reversed(configs)][::-1]
        other = [base.with_noise(mode, 8).evaluate(c).objective_ms for c in configs]
        assert first == again and first != other
        for i, value in zip(rows, first, strict=True):
            times = frame.at[i, "times_ms"]
            if mode == "repeat":
                assert value in times
            else:
                assert min(times) <= value <= max(times)
        assert first != [float(frame.at[i, "objective_ms"]) for i in rows]
    plain = [base.evaluate(c).objective_ms for c in configs]
    assert plain == [float(frame.at[i, "objective_ms"]) for i in rows]
    assert "bootstrap" not in base.describe() and "resample" in base.with_noise("bootstrap", 1).describe()


def test_single_repeat_falls_back_to_the_objective_and_bad_modes_are_named():
    ds = _dataset([{"x": 1, "objective_ms": 2.0, "times_ms": [2.5]},
                   {"x": 2, "objective_ms": 3.0, "times_ms": [3.0, 3.1]}])
    b = ReplayBackend(ds, noise="repeat", noise_seed=3)
    assert b.evaluate({"x": 1}).objective_ms == 2.0 and b.noise_fallbacks == 1
    assert "1 of 2 ok configurations have fewer than two recorded times" in b.describe()
    with pytest.raises(UnknownNameError, match="replay noise mode 'loud'"):
        ReplayBackend(ds, noise="loud")
    with pytest.raises(UnknownNameError, match="replay noise mode"):
        TargetRequest(noise="loud")


def test_noise_needs_the_replay_backend():
    with pytest.raises(BackendError, match="only the replay backend"):
        make_target("benchmarks/matmul_c/space.json", backend="command",
                    request=TargetRequest(noise="repeat"))


@pytest.mark.parametrize("mode", ["repeat", "bootstrap"])
def test_a_noise_mode_on_data_without_repeats_is_refused(mode):
    """Issue 43, class 5: the recorded objective under the name of noise, with no note, is refused."""
    ds = _dataset([{"x": 1, "objective_ms": 2.0, "times_ms": [2.5]}, {"x": 2, "objective_ms": 3.0}])
    with pytest.raises(DatasetError, match=f"--noise {mode}: dataset toy/G records fewer than two times"):
        ReplayBackend(ds, noise=mode)
    with pytest.raises(DatasetError, match="nothing to draw from"):
        ReplayBackend(ds).with_noise(mode, 1)
    assert "fewer than two" not in ReplayBackend(ds).describe()


def test_bat_run_shows_where_the_charges_fall_back(tmp_path, capsys):
    import json

    from bat.cli import main

    args = ["run", "-t", "reference:random", "-b", "coulomb", "-n", "5", "--tuner-charge", "0"]
    assert main([*args, "-o", str(tmp_path / "a.parquet")]) == 0
    assert "simulated time: each evaluation is charged" in capsys.readouterr().out
    assert main([*args, "-o", str(tmp_path / "b.parquet"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert "falls back" in doc["simulated_time"] and doc["timeout_factor"] is None
    assert main(["run", "-t", "reference:random", "-b", "pnpoly", "-n", "5", "--tuner-charge", "0", "--json",
                 "-o", str(tmp_path / "c.parquet")]) == 0
    assert "falls back" not in json.loads(capsys.readouterr().out)["simulated_time"]
