// Expdist: the registration cost of two particles in localization microscopy, double
// precision:  cost = sum_i sum_j exp(-|a_i - b_j|^2 / (2 (sa_i^2 + sb_j^2)))
// for the n_points_a localizations a_i (uncertainty sa_i) and n_points_b localizations
// b_j (sb_j), B already transformed by the candidate registration.
// Kernel 1 (expdist_kernel): a block of block_size_x x block_size_y threads takes
// block_size_x * tile_size_x points of A and, per column block, block_size_y *
// tile_size_y points of B; each thread does tile_size_x x tile_size_y pairs (strided by
// the block size), the two tile loops unrolled loop_unroll_factor_x / _y times. With
// use_column = 1 the grid has n_y_blocks blocks in y that loop over all column blocks;
// otherwise one block per column block. use_shared_mem: 0 reads points from global
// memory, 1 stages the block's B points in shared memory, 2 stages A's as well. The
// block's partial sum is reduced in shared memory and written to partial[block].
// Kernel 2 (reduce_kernel): one block of REDUCE_THREADS threads sums the partials in a
// fixed order into cost[0] (deterministic; no atomics).
// Macros: the tunable parameters plus n_points_a and n_points_b.

#define DO_PRAGMA(x) _Pragma(#x)
#define UNROLL(n) DO_PRAGMA(unroll n)

#define BX block_size_x
#define BY block_size_y
#define THREADS (BX * BY)
#define A_TILE (BX * tile_size_x)
#define B_TILE (BY * tile_size_y)
#define COLUMN_BLOCKS ((n_points_b + B_TILE - 1) / B_TILE)
#define REDUCE_THREADS 256

static_assert(tile_size_x % loop_unroll_factor_x == 0 && tile_size_y % loop_unroll_factor_y == 0,
              "an unroll factor must divide its tile size");

__device__ __forceinline__ double block_sum(double value, double* red) {
    const int tid = threadIdx.y * BX + threadIdx.x;
    red[tid] = value;
    __syncthreads();
    for (int half = 1; half < THREADS; half *= 2) {  // tree over a power-of-two count
        if (tid % (2 * half) == 0 && tid + half < THREADS) red[tid] += red[tid + half];
        __syncthreads();
    }
    return red[0];
}

extern "C" __global__ void __launch_bounds__(THREADS)
expdist_kernel(const double2* __restrict__ a, const double* __restrict__ sa,
               const double2* __restrict__ b, const double* __restrict__ sb,
               double* __restrict__ partial) {
    __shared__ double red[THREADS];
#if use_shared_mem >= 1  // staged points as separate doubles: 24 bytes each, no padding
    __shared__ double sh_bx[B_TILE], sh_by[B_TILE], sh_sb[B_TILE];
#endif
    const int tid = threadIdx.y * BX + threadIdx.x;
    const int i0 = blockIdx.x * A_TILE;

    double2 pa[tile_size_x];
    double va[tile_size_x];
#if use_shared_mem == 2
    __shared__ double sh_ax[A_TILE], sh_ay[A_TILE], sh_sa[A_TILE];
    for (int k = tid; k < A_TILE; k += THREADS) {
        const bool ok = i0 + k < n_points_a;
        const double2 p = ok ? a[i0 + k] : make_double2(0.0, 0.0);
        sh_ax[k] = p.x;
        sh_ay[k] = p.y;
        sh_sa[k] = ok ? sa[i0 + k] : 1.0;
    }
    __syncthreads();
#endif
#pragma unroll
    for (int ti = 0; ti < tile_size_x; ++ti) {
        const int k = threadIdx.x + ti * BX;
#if use_shared_mem == 2
        pa[ti] = make_double2(sh_ax[k], sh_ay[k]);
        va[ti] = sh_sa[k] * sh_sa[k];
#else
        const bool ok = i0 + k < n_points_a;
        pa[ti] = ok ? a[i0 + k] : make_double2(0.0, 0.0);
        va[ti] = ok ? sa[i0 + k] * sa[i0 + k] : 1.0;
#endif
    }

    double sum = 0.0;
#if use_column
    for (int jb = blockIdx.y; jb < COLUMN_BLOCKS; jb += gridDim.y) {
#else
    {
        const int jb = blockIdx.y;
#endif
        const int j0 = jb * B_TILE;
#if use_shared_mem >= 1
        __syncthreads();  // the previous column block is done with sh_b
        for (int k = tid; k < B_TILE; k += THREADS) {
            const bool ok = j0 + k < n_points_b;
            const double2 p = ok ? b[j0 + k] : make_double2(0.0, 0.0);
            sh_bx[k] = p.x;
            sh_by[k] = p.y;
            sh_sb[k] = ok ? sb[j0 + k] : 1.0;
        }
        __syncthreads();
#endif
        UNROLL(loop_unroll_factor_y)
        for (int tj = 0; tj < tile_size_y; ++tj) {
            const int kb = threadIdx.y + tj * BY;
            if (j0 + kb >= n_points_b) continue;
#if use_shared_mem >= 1
            const double2 pb = make_double2(sh_bx[kb], sh_by[kb]);
            const double vb = sh_sb[kb] * sh_sb[kb];
#else
            const double2 pb = b[j0 + kb];
            const double vb = sb[j0 + kb] * sb[j0 + kb];
#endif
            UNROLL(loop_unroll_factor_x)
            for (int ti = 0; ti < tile_size_x; ++ti) {
                if (i0 + (int)threadIdx.x + ti * BX >= n_points_a) continue;
                const double dx = pa[ti].x - pb.x;
                const double dy = pa[ti].y - pb.y;
                sum += exp(-(dx * dx + dy * dy) / (2.0 * (va[ti] + vb)));
            }
        }
    }
    const double total = block_sum(sum, red);
    if (tid == 0) partial[blockIdx.y * gridDim.x + blockIdx.x] = total;
}

extern "C" __global__ void __launch_bounds__(REDUCE_THREADS)
reduce_kernel(const double* __restrict__ partial, double* __restrict__ cost, const int count) {
    __shared__ double red[REDUCE_THREADS];
    double sum = 0.0;
    for (int k = threadIdx.x; k < count; k += REDUCE_THREADS) sum += partial[k];
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int half = REDUCE_THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) red[threadIdx.x] += red[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) cost[0] = red[0];
}
