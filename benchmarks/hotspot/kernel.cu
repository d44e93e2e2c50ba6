// Hotspot: Rodinia-style thermal simulation, an explicit 5-point stencil in time,
// with temporal tiling. A block owns an output tile of (block_size_x * tile_size_x) x
// (block_size_y * tile_size_y) cells. It loads that tile plus a halo of
// temporal_tiling_factor (T) cells on every side into shared memory and does `steps`
// (<= T) time steps there, ping-ponging between two buffers; after s steps the cells at
// least s away from the loaded region's border are exact, so after `steps` the whole
// output tile is. Threads cover the region cyclically (cell x = threadIdx.x + i *
// block_size_x), which is tile_size_x x tile_size_y cells each in the output tile.
// Cells outside the grid are never computed; a grid-edge cell uses its own temperature
// for a missing neighbour (Rodinia's boundary). sh_power caches the power map in shared
// memory; loop_unroll_factor_t unrolls the time loop; blocks_per_sm > 0 is passed to
// __launch_bounds__ as the minimum resident blocks per SM.
// Macros: the tunable parameters plus grid_width and grid_height.
// Shared memory: (2 + sh_power) * 4 * W * H bytes, W = BX * TX + 2T, H = BY * TY + 2T.

#define DO_PRAGMA(x) _Pragma(#x)
#define UNROLL(n) DO_PRAGMA(unroll n)

#define BX block_size_x
#define BY block_size_y
#define T temporal_tiling_factor
#define W (BX * tile_size_x + 2 * T)
#define H (BY * tile_size_y + 2 * T)

#if blocks_per_sm > 0
#define BOUNDS __launch_bounds__(BX * BY, blocks_per_sm)
#else
#define BOUNDS __launch_bounds__(BX * BY)
#endif

extern "C" __global__ void BOUNDS
hotspot_kernel(const float* __restrict__ temp_src, const float* __restrict__ power,
               float* __restrict__ temp_dst, const int steps, const float step_div_cap,
               const float rx_1, const float ry_1, const float rz_1, const float amb_temp) {
    __shared__ float sh_temp[2][H][W];
#if sh_power
    __shared__ float sh_pow[H][W];
#endif
    const int ox = blockIdx.x * BX * tile_size_x - T;  // grid position of local (0, 0)
    const int oy = blockIdx.y * BY * tile_size_y - T;

    for (int ly = threadIdx.y; ly < H; ly += BY) {
        const int gy = oy + ly;
        for (int lx = threadIdx.x; lx < W; lx += BX) {
            const int gx = ox + lx;
            const bool inside = gx >= 0 && gx < grid_width && gy >= 0 && gy < grid_height;
            const size_t g = (size_t)gy * grid_width + gx;
            sh_temp[0][ly][lx] = inside ? temp_src[g] : 0.0f;
#if sh_power
            sh_pow[ly][lx] = inside ? power[g] : 0.0f;
#endif
        }
    }
    __syncthreads();

    UNROLL(loop_unroll_factor_t)
    for (int s = 1; s <= steps; ++s) {
        const int cur = (s - 1) & 1;
        for (int ly = threadIdx.y; ly < H - s; ly += BY) {
            if (ly < s) continue;
            const int gy = oy + ly;
            if (gy < 0 || gy >= grid_height) continue;
            for (int lx = threadIdx.x; lx < W - s; lx += BX) {
                const int gx = ox + lx;
                if (lx < s || gx < 0 || gx >= grid_width) continue;
                const float c = sh_temp[cur][ly][lx];
                const float north = gy > 0 ? sh_temp[cur][ly - 1][lx] : c;
                const float south = gy < grid_height - 1 ? sh_temp[cur][ly + 1][lx] : c;
                const float west = gx > 0 ? sh_temp[cur][ly][lx - 1] : c;
                const float east = gx < grid_width - 1 ? sh_temp[cur][ly][lx + 1] : c;
#if sh_power
                const float p = sh_pow[ly][lx];
#else
                const float p = power[(size_t)gy * grid_width + gx];
#endif
                sh_temp[cur ^ 1][ly][lx] =
                    c + step_div_cap * (p + (north + south - 2.0f * c) * ry_1 +
                                        (east + west - 2.0f * c) * rx_1 + (amb_temp - c) * rz_1);
            }
        }
        __syncthreads();
    }

    const int fin = steps & 1;
    for (int ly = T + threadIdx.y; ly < H - T; ly += BY) {
        const int gy = oy + ly;
        if (gy >= grid_height) break;
        for (int lx = T + threadIdx.x; lx < W - T; lx += BX) {
            const int gx = ox + lx;
            if (gx >= grid_width) break;
            temp_dst[(size_t)gy * grid_width + gx] = sh_temp[fin][ly][lx];
        }
    }
}
