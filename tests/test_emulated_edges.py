"""Emulated checks that reach every edge: a problem size per configuration (bat.backends.emulated.edges).

At one fixed emulation size many configurations run a single block in some dimension (the
Hotspot grid, 37 cells wide, gives 54 % of its valid configurations one block column), so a
halo bug between blocks passes. ``edge_size`` grows the size per configuration to two blocks
with a partial last tile in every dimension the kernel tiles, or says why it cannot; the share
test reports, for every benchmark with a kernel, the share of its valid configurations that
get two blocks in every tiled dimension, at the fixed size and at the edge sizes.
"""

from __future__ import annotations

import numpy as np
from kernel_configs import CONFIGS

from bat.backends.emulated.edges import AXES, EdgeSessions, edge_size
from bat.cli import main
from bat.core.benchmark import load_benchmark
from bat.core.dataset import Status

KERNELS = ["gemm", "nbody", "hotspot", "pnpoly", "convolution", "expdist", "dedispersion", "convolution_milo",
           "dedispersion_milo"]
SAMPLE = 1000


def test_share_of_configurations_with_two_blocks_in_every_tiled_dimension(capsys) -> None:
    lines, shares = [], {}
    for name in KERNELS:
        bench = load_benchmark(name)
        base, space = bench.size("emulation"), bench.space
        rows = space.sample_valid(min(SAMPLE, space.count_valid()), np.random.default_rng(0))
        fixed = edged = 0
        for row in rows:
            config = space.config(row)
            edge = edge_size(bench, config, base)
            grid, _ = bench.geometry(config, dict(base.values))
            fixed += all(grid[AXES.index(a)] >= 2 for a in edge.tiled)
            edged += edge.two_blocks
            if not edge.two_blocks:  # only where the configuration, not the size, sets the block count
                assert any("set by the configuration" in note for note in edge.notes), (name, config, edge)
            assert edge.tiled, name
        shares[name] = edged / len(rows)
        lines.append(f"{name} {fixed / len(rows):.1%} -> {shares[name]:.1%}")
    with capsys.disabled():
        print(f"\ntwo blocks in every tiled dimension (uniform sample of up to {SAMPLE} valid configurations, "
              "fixed emulation size -> edge sizes): " + "; ".join(lines))
    assert all(shares[n] == 1.0 for n in KERNELS if n != "expdist"), shares
    assert shares["expdist"] > 0.85  # use_column = 1 with n_y_blocks = 1: one block row, whatever the size


def test_edge_sizes_follow_the_launch_grid() -> None:
    conv = load_benchmark("convolution_milo")
    base = conv.size("emulation")  # 37 x 59
    wide = {**CONFIGS["convolution_milo"], "block_size_x": 64, "tile_size_x": 1, "block_size_y": 1, "tile_size_y": 1}
    edge = edge_size(conv, wide, base)
    assert edge.size.values["image_width"] == 64 + 37 and edge.blocks[:2] == (2, 59)  # the base remainder kept
    assert edge.notes == ("y: one element per block, so no tile is partial",)
    kept = edge_size(conv, CONFIGS["convolution_milo"], base)  # 32 x 8 tiles: 37 x 59 already has both edges
    assert kept.size == base and kept.notes == () and kept.two_blocks
    gemm = load_benchmark("gemm")
    whole = edge_size(gemm, {**CONFIGS["gemm"], "MWG": 128}, gemm.size("emulation"))
    assert whole.size.values["M"] % 128 == 0 and whole.blocks[0] >= 2
    assert any("whole tiles only" in note for note in whole.notes)
    expdist = load_benchmark("expdist")
    column = {**CONFIGS["expdist"], "use_column": 1, "n_y_blocks": 1}
    assert expdist.space.is_valid(expdist.space.index(column)[None, :])[0]
    one = edge_size(expdist, column, expdist.size("emulation"))
    assert not one.two_blocks and one.notes[-1].startswith("y: one block (n_y_blocks = 1)")


def halo_bug(source: str) -> str:
    """Hotspot's tile load without its west halo: zeros where the neighbouring block's cells belong."""
    old = "sh_temp[0][ly][lx] = inside ? temp_src[g] : 0.0f;"
    assert source.count(old) == 1
    return source.replace(old, "sh_temp[0][ly][lx] = inside && lx >= T ? temp_src[g] : 0.0f;")


def test_an_x_halo_bug_passes_at_the_fixed_size_and_is_caught_at_the_edge() -> None:
    bench = load_benchmark("hotspot")
    config = {**CONFIGS["hotspot"], "block_size_x": 64}  # 64 columns per block: one block column at width 37
    sessions = EdgeSessions(bench, bench.size("emulation"))
    broken = halo_bug(sessions.first.source)
    assert sessions.first.verify(config, source=broken).ok  # the fixed size misses it
    edge, checked = sessions.verify(config, source=broken)
    assert edge.blocks[0] == 2 and edge.size.values["grid_width"] == 64 + 37
    assert checked.result.status is Status.INCORRECT, checked.result.message
    assert sessions.verify(config)[1].ok  # the kernel as shipped passes at the same size


def test_verify_says_the_size_of_each_configuration(capsys) -> None:
    config = '{"block_size_x": 64, "block_size_y": 4, "tile_size_x": 1, "tile_size_y": 2, ' \
             '"temporal_tiling_factor": 3, "loop_unroll_factor_t": 1, "sh_power": 1, "blocks_per_sm": 0}'
    assert main(["verify", "-b", "hotspot", "--config", config]) == 0
    out = capsys.readouterr().out
    assert "at grid_width=101, grid_height=331, n_steps=7 (2 x 42 x 1 blocks)" in " ".join(out.split())
    assert main(["verify", "-b", "hotspot", "--config", config, "--no-edges"]) == 0
    assert "grid_width=101" not in capsys.readouterr().out

