"""NumPy references of the nine kernels against independent computations; input determinism."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bat.core.benchmark import load_benchmark
from bat.core.kernel import digest, load_runner

BENCHMARKS = ["gemm", "nbody", "hotspot", "pnpoly", "convolution", "expdist", "dedispersion", "convolution_milo",
              "dedispersion_milo"]


def small(name: str) -> dict:
    return dict(load_benchmark(name).small_problem_size)


@pytest.mark.parametrize("name", BENCHMARKS)
def test_inputs_are_deterministic(name: str) -> None:
    runner, size = load_runner(name), small(name)
    first, again, other = (runner.make_inputs(size, s) for s in (7, 7, 8))
    assert digest(first) == digest(again)
    assert digest(first) != digest(other)
    for arr in first.values():
        assert arr.dtype.byteorder in "<|=" and arr.flags.c_contiguous


@pytest.mark.parametrize("name", BENCHMARKS)
def test_verify_accepts_reference_and_rejects_a_wrong_element(name: str) -> None:
    runner, size = load_runner(name), small(name)
    inputs = runner.make_inputs(size, 3)
    ref = runner.reference(inputs, size)
    outputs = {k: inputs[k].copy() for k in runner.output_names()}
    rows = ref.get("rows", ref.get("dms"))
    for key in runner.output_names():
        if rows is None:
            outputs[key][...] = ref[key]
        else:
            outputs[key][rows] = ref[key]
    assert runner.verify(outputs, ref), runner.verify(outputs, ref).message
    key = runner.output_names()[0]
    flat = outputs[key].reshape(-1)
    flat[-1] = flat[-1] + 1000 if flat.dtype.kind == "f" else 1 - flat[-1]
    result = runner.verify(outputs, ref)
    assert not result and key in result.message


def test_gemm_reference_is_alpha_ab_plus_beta_c() -> None:
    runner = load_runner("gemm")
    size = {"M": 48, "N": 40, "K": 24}
    inp = runner.make_inputs(size, 1)
    a, b, c = inp["a"].T, inp["b"], inp["c"].T  # column-major A (M x K), B (K x N), C (M x N)
    expected = 0.75 * np.matmul(a, b, dtype=np.float64) + 0.5 * c
    got = runner.reference(inp, size)["c"].T
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    i, j = 5, 7
    loop = sum(float(a[i, k]) * float(b[k, j]) for k in range(size["K"]))
    assert got[i, j] == pytest.approx(0.75 * loop + 0.5 * float(c[i, j]), rel=1e-12)


@pytest.mark.parametrize("size", [{"image_width": 40, "image_height": 30},
                                  {"image_width": 24, "image_height": 600}])
def test_convolution_reference_matches_scipy(size: dict) -> None:
    from scipy.signal import correlate2d

    runner = load_runner("convolution")
    inp = runner.make_inputs(size, 2)
    ref = runner.reference(inp, size)
    full = correlate2d(inp["input"].astype(np.float64), inp["d_filter"].astype(np.float64),
                       mode="valid")
    assert full.shape == (size["image_height"], size["image_width"])
    np.testing.assert_allclose(ref["output"], full[ref["rows"]], rtol=1e-10, atol=1e-12)
    assert ref["rows"][0] == 0 and ref["rows"][-1] == size["image_height"] - 1


def test_nbody_reference_matches_direct_loops() -> None:
    runner = load_runner("nbody")
    size = {"n_bodies": 64}
    inp = runner.make_inputs(size, 4)
    ref = runner.reference(inp, size)
    pos, vel = inp["pos4"].astype(np.float64), inp["vel"].astype(np.float64)
    for i in (0, 17, 63):
        acc = [0.0, 0.0, 0.0]
        for j in range(size["n_bodies"]):
            d = [pos[j, k] - pos[i, k] for k in range(3)]
            r2 = d[0] ** 2 + d[1] ** 2 + d[2] ** 2 + 0.01**2
            for k in range(3):
                acc[k] += pos[j, 3] * d[k] / r2**1.5
        v = [(vel[i, k] + acc[k] * 0.001) * 0.5 for k in range(3)]
        np.testing.assert_allclose(ref["vel_out"][i, :3], v, rtol=1e-12)
        np.testing.assert_allclose(ref["pos_out"][i, :3],
                                   [pos[i, k] + v[k] * 0.001 for k in range(3)], rtol=1e-12)


def test_nbody_reference_samples_large_sizes() -> None:
    runner = load_runner("nbody")
    size = {"n_bodies": 20000}
    ref = runner.reference(runner.make_inputs(size, 0), size)
    assert ref["rows"].size == 512 and ref["rows"][0] == 0 and ref["rows"][-1] == 19999
    assert np.isfinite(ref["vel_out"]).all()


def test_hotspot_reference_matches_direct_loops() -> None:
    from bat.benchmarks.hotspot.runner import AMB_TEMP, coefficients

    runner = load_runner("hotspot")
    size = {"grid_width": 6, "grid_height": 5, "n_steps": 3}
    inp = runner.make_inputs(size, 5)
    c = coefficients()
    t = inp["temp"].astype(np.float64).tolist()
    p = inp["power"].astype(np.float64)
    h, w = size["grid_height"], size["grid_width"]
    for _ in range(size["n_steps"]):
        new = [[0.0] * w for _ in range(h)]
        for y in range(h):
            for x in range(w):
                cur = t[y][x]
                north = t[y - 1][x] if y > 0 else cur
                south = t[y + 1][x] if y < h - 1 else cur
                west = t[y][x - 1] if x > 0 else cur
                east = t[y][x + 1] if x < w - 1 else cur
                new[y][x] = cur + c["step_div_cap"] * (
                    p[y, x] + (north + south - 2 * cur) * c["ry_1"]
                    + (east + west - 2 * cur) * c["rx_1"] + (AMB_TEMP - cur) * c["rz_1"])
        t = new
    np.testing.assert_allclose(runner.reference(inp, size)["temp_out"], t, rtol=1e-12)
    assert np.abs(np.array(t) - inp["temp"]).max() > 0.1  # the stencil does move temperatures


def test_hotspot_launches_chain_to_temp_out() -> None:
    runner = load_runner("hotspot")
    config = {"block_size_x": 32, "block_size_y": 2, "tile_size_x": 2, "tile_size_y": 3,
              "temporal_tiling_factor": 3, "loop_unroll_factor_t": 1, "sh_power": 0,
              "blocks_per_sm": 0}
    size = {"grid_width": 250, "grid_height": 190, "n_steps": 10}
    launches = runner.launches(config, size)
    assert [int(la.args[3][1]) for la in launches] == [3, 3, 3, 1]
    assert launches[0].args[0] == "temp" and launches[-1].args[2] == "temp_out"
    for before, after in itertools.pairwise(launches):
        assert after.args[0] == before.args[2] != after.args[2]
    assert launches[0].grid == (4, 32, 1) and launches[0].block == (32, 2, 1)


def test_pnpoly_reference_matches_matplotlib_and_loops() -> None:
    from matplotlib.path import Path

    runner = load_runner("pnpoly")
    size = {"n_points": 20000, "n_vertices": 600}
    inp = runner.make_inputs(size, 6)
    ref = runner.reference(inp, size)
    assert ref["rows"].size == size["n_points"]
    inside = Path(inp["vertices"].astype(np.float64)).contains_points(inp["points"])
    assert 0.1 < inside.mean() < 0.9
    assert np.count_nonzero(inside != ref["bitmap"].astype(bool)) <= 2  # points on an edge
    verts = inp["vertices"].astype(np.float64)
    for i in range(0, size["n_points"], 997):
        px, py = inp["points"][i].astype(np.float64)
        c = False
        for j in range(len(verts)):
            (xj, yj), (xk, yk) = verts[j], verts[j - 1]
            if (yj > py) != (yk > py) and px < (xk - xj) * (py - yj) / (yk - yj) + xj:
                c = not c
        assert int(c) == ref["bitmap"][i]


def test_expdist_reference_matches_double_loop() -> None:
    runner = load_runner("expdist")
    size = {"n_points_a": 13, "n_points_b": 21}
    inp = runner.make_inputs(size, 9)
    total = 0.0
    for i in range(size["n_points_a"]):
        for j in range(size["n_points_b"]):
            d2 = float(np.sum((inp["a"][i] - inp["b"][j]) ** 2))
            total += np.exp(-d2 / (2.0 * (inp["sa"][i] ** 2 + inp["sb"][j] ** 2)))
    assert runner.reference(inp, size)["cost"][0] == pytest.approx(total, rel=1e-12)
    assert total > 1.0


def test_dedispersion_reference_matches_loops_and_physics() -> None:
    from bat.benchmarks.dedispersion.runner import delay_table

    runner = load_runner("dedispersion")
    size = {"n_samples": 12, "n_channels": 1536, "n_dms": 70}
    inp = runner.make_inputs(size, 10)
    ref = runner.reference(inp, size)
    assert ref["dms"].size == 16 and ref["dms"][-1] == 69
    data, delays = inp["input"].astype(np.int64), inp["delays"]
    for k, dm in enumerate(ref["dms"][:4]):
        for s in (0, 11):
            expected = sum(data[c, s + delays[c, dm]] for c in range(size["n_channels"]))
            assert ref["output"][k, s] == expected
    full = delay_table(1536, 2048)
    assert (full[-1] == 0).all() and (full[:, 0] == 0).all()
    assert (np.diff(full[:, -1]) <= 0).all()  # lower frequencies arrive later
    assert 640 <= full.max() <= 660  # about 0.0266 s at DM 40.94 over 1425-1725 MHz


def test_convolution_milo_reference_matches_scipy() -> None:
    from scipy.signal import correlate2d

    runner = load_runner("convolution_milo")
    size = {"image_width": 45, "image_height": 31}
    inp = runner.make_inputs(size, 2)
    assert inp["d_filter"].size == 33 * 33 and not inp["d_filter"][225:].any()
    np.testing.assert_array_equal(inp["d_filter"][:225], inp["filter"].ravel())
    ref = runner.reference(inp, size)
    full = correlate2d(inp["input"].astype(np.float64), inp["filter"].astype(np.float64), mode="valid")
    assert full.shape == (31, 45)
    np.testing.assert_allclose(ref["output"], full[ref["rows"]], rtol=1e-10, atol=1e-12)


def test_dedispersion_milo_reference_matches_the_kernels_loop() -> None:
    """The kernel's own loop, element by element in float32 (shift truncated), on a few outputs."""
    runner = load_runner("dedispersion_milo")
    size = {"nr_samples": 20, "nr_dms": 90, "nr_channels": 48}
    inp = runner.make_inputs(size, 4)
    assert inp["input"].shape == (48, 20 + 650) and inp["shifts"].dtype == np.float32 and inp["shifts"][-1] == 0
    ref = runner.reference(inp, size)
    data, shifts = inp["input"].ravel(), inp["shifts"]
    for k, dm in enumerate(ref["dms"][:4]):
        for sample in (0, 7, 19):
            total = np.float32(0.0)
            for channel in range(48):
                dm_value = np.float32(np.float32(0.0) + np.float32(dm) * np.float32(0.02))
                shift = int(np.float32(dm_value * shifts[channel]))
                total = np.float32(total + np.float32(data[channel * (20 + 650) + sample + shift]))
            assert ref["output"][k, sample] == total
    assert ref["dms"][0] == 0 and ref["dms"][-1] == 89 and ref["dms"].size == 16
    with pytest.raises(ValueError, match="nr_dms 3000 shifts a channel by"):
        runner.make_inputs({"nr_samples": 20, "nr_dms": 3000, "nr_channels": 1536}, 0)
