// Dedispersion (brute force, AMBER-style): for every dispersion measure dm and output
// sample s,  output[dm][s] = sum_c input[c][s + delays[c][dm]]  over n_channels 8-bit
// channels. x is the sample dimension, y the DM dimension. A thread does tile_size_x
// samples by tile_size_y DMs: consecutive (tile_stride = 0: thread t owns t*tile ...
// t*tile + tile - 1) or strided by the block (tile_stride = 1: t, t + block, ...).
// loop_unroll_factor_channel unrolls the channel loop (0 = no pragma: the compiler
// decides); blocks_per_sm > 0 is passed to __launch_bounds__. Sums of at most
// 1536 * 255 are exact in float. Partial tiles: indices are clamped for the reads and
// the writes are guarded.
// Macros: the tunable parameters plus n_samples, n_channels, n_dms and n_samples_in
// (input row length: n_samples plus the largest delay).

#define DO_PRAGMA(x) _Pragma(#x)
#define UNROLL(n) DO_PRAGMA(unroll n)  // expands n first: the pragma gets the number
#if loop_unroll_factor_channel > 0
#define UNROLL_CHANNEL UNROLL(loop_unroll_factor_channel)
static_assert(n_channels % loop_unroll_factor_channel == 0,
              "loop_unroll_factor_channel must divide n_channels");
#else
#define UNROLL_CHANNEL
#endif

#define BX block_size_x
#define BY block_size_y
#define TX tile_size_x
#define TY tile_size_y

#if blocks_per_sm > 0
#define BOUNDS __launch_bounds__(BX * BY, blocks_per_sm)
#else
#define BOUNDS __launch_bounds__(BX * BY)
#endif

__device__ __forceinline__ int sample_of(int i) {
#if tile_stride_x
    return blockIdx.x * BX * TX + i * BX + threadIdx.x;
#else
    return (blockIdx.x * BX + threadIdx.x) * TX + i;
#endif
}

__device__ __forceinline__ int dm_of(int j) {
#if tile_stride_y
    return blockIdx.y * BY * TY + j * BY + threadIdx.y;
#else
    return (blockIdx.y * BY + threadIdx.y) * TY + j;
#endif
}

extern "C" __global__ void BOUNDS
dedispersion_kernel(const unsigned char* __restrict__ input, float* __restrict__ output,
                    const int* __restrict__ delays) {
    float acc[TY][TX];
#pragma unroll
    for (int j = 0; j < TY; ++j) {
#pragma unroll
        for (int i = 0; i < TX; ++i) acc[j][i] = 0.0f;
    }

    UNROLL_CHANNEL
    for (int c = 0; c < n_channels; ++c) {
        const unsigned char* row = input + (size_t)c * n_samples_in;
#pragma unroll
        for (int j = 0; j < TY; ++j) {
            const int delay = delays[c * n_dms + min(dm_of(j), n_dms - 1)];
#pragma unroll
            for (int i = 0; i < TX; ++i)
                acc[j][i] += (float)row[min(sample_of(i), n_samples - 1) + delay];
        }
    }

#pragma unroll
    for (int j = 0; j < TY; ++j) {
        const int dm = dm_of(j);
#pragma unroll
        for (int i = 0; i < TX; ++i) {
            const int s = sample_of(i);
            if (dm < n_dms && s < n_samples) output[(size_t)dm * n_samples + s] = acc[j][i];
        }
    }
}
