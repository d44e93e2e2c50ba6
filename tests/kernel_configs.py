"""One valid configuration per kernel that takes its interesting paths (shared memory, barriers,
unrolling > 0), shared by the emulation and compiler tests."""

from __future__ import annotations

CONFIGS: dict[str, dict[str, int]] = {
    "gemm": {"MWG": 64, "NWG": 64, "KWG": 32, "MDIMC": 16, "NDIMC": 16, "MDIMA": 16, "NDIMB": 16, "KWI": 2,
             "VWM": 2, "VWN": 2, "STRM": 0, "STRN": 0, "SA": 1, "SB": 1, "PRECISION": 32},
    "nbody": {"block_size": 64, "outer_unroll_factor": 2, "inner_unroll_factor1": 4, "inner_unroll_factor2": 2,
              "use_soa": 1, "local_mem": 1, "vector_type": 2},
    "hotspot": {"block_size_x": 32, "block_size_y": 4, "tile_size_x": 1, "tile_size_y": 2,
                "temporal_tiling_factor": 3, "loop_unroll_factor_t": 1, "sh_power": 1, "blocks_per_sm": 0},
    "pnpoly": {"between_method": 0, "block_size_x": 64, "tile_size": 4, "use_method": 1},
    "convolution": {"block_size_x": 16, "block_size_y": 8, "tile_size_x": 2, "tile_size_y": 2, "use_padding": 0,
                    "read_only": 1, "filter_width": 15, "filter_height": 15},
    "expdist": {"block_size_x": 32, "block_size_y": 2, "tile_size_x": 2, "tile_size_y": 2, "use_shared_mem": 2,
                "loop_unroll_factor_x": 1, "loop_unroll_factor_y": 2, "use_column": 0, "n_y_blocks": 1},
    "dedispersion": {"block_size_x": 16, "block_size_y": 2, "tile_size_x": 2, "tile_size_y": 2, "tile_stride_x": 1,
                     "tile_stride_y": 0, "loop_unroll_factor_channel": 4, "blocks_per_sm": 0},
}
CONFIGS.update({
    "convolution_milo": {"block_size_x": 16, "block_size_y": 4, "tile_size_x": 2, "tile_size_y": 2, "read_only": 1,
                         "use_padding": 1, "use_shmem": 1, "use_cmem": 1, "filter_height": 15, "filter_width": 15},
    "dedispersion_milo": {"block_size_x": 4, "block_size_y": 32, "block_size_z": 1, "tile_size_x": 2, "tile_size_y": 2,
                          "tile_stride_x": 1, "tile_stride_y": 0, "loop_unroll_factor_channel": 0},
})
