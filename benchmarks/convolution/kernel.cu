// 2D convolution (cross-correlation, as in image filtering), single precision:
//   output[y][x] = sum_{i < filter_height, j < filter_width} filter[i][j] * input[y + i][x + j]
// The input is (image_height + filter_height - 1) x (image_width + filter_width - 1);
// the filter lives in constant memory (`d_filter`, copied by the host). A block of
// block_size_x x block_size_y threads computes a tile of (block_size_x * tile_size_x) x
// (block_size_y * tile_size_y) outputs; the input tile with its halo is staged in static
// shared memory first. use_padding adds one float to each shared-memory row (the row
// stride then differs from a multiple of the 32 banks more often); read_only loads the
// input through the read-only data cache (__ldg). Each thread's outputs are strided by
// the block size so neighbouring threads touch neighbouring pixels. Partial tiles at
// the right and bottom edges are guarded. A tile whose shared memory exceeds 48 KiB
// fails to compile (ptxas: too much shared data): that failure is data.
// Macros: the tunable parameters plus image_width and image_height.

#define IN_W (image_width + filter_width - 1)
#define IN_H (image_height + filter_height - 1)
#define TILE_W (block_size_x * tile_size_x)
#define TILE_H (block_size_y * tile_size_y)
#define SH_W (TILE_W + filter_width - 1)
#define SH_H (TILE_H + filter_height - 1)
#define SH_STRIDE (SH_W + use_padding)

#if read_only
#define LOAD(ptr) __ldg(ptr)
#else
#define LOAD(ptr) (*(ptr))
#endif

__constant__ float d_filter[filter_height * filter_width];

extern "C" __global__ void __launch_bounds__(block_size_x * block_size_y)
convolution_kernel(float* __restrict__ output, const float* __restrict__ input) {
    __shared__ float sh_input[SH_H * SH_STRIDE];
    const int x0 = blockIdx.x * TILE_W;
    const int y0 = blockIdx.y * TILE_H;

    for (int ly = threadIdx.y; ly < SH_H; ly += block_size_y) {
        const int gy = y0 + ly;
        for (int lx = threadIdx.x; lx < SH_W; lx += block_size_x) {
            const int gx = x0 + lx;
            sh_input[ly * SH_STRIDE + lx] =
                (gx < IN_W && gy < IN_H) ? LOAD(input + (size_t)gy * IN_W + gx) : 0.0f;
        }
    }
    __syncthreads();

    float sum[tile_size_y][tile_size_x];
#pragma unroll
    for (int i = 0; i < tile_size_y; ++i) {
#pragma unroll
        for (int j = 0; j < tile_size_x; ++j) sum[i][j] = 0.0f;
    }

    for (int fy = 0; fy < filter_height; ++fy) {
#pragma unroll
        for (int fx = 0; fx < filter_width; ++fx) {
            const float f = d_filter[fy * filter_width + fx];
#pragma unroll
            for (int i = 0; i < tile_size_y; ++i) {
                const int row = (threadIdx.y + i * block_size_y + fy) * SH_STRIDE;
#pragma unroll
                for (int j = 0; j < tile_size_x; ++j)
                    sum[i][j] = fmaf(sh_input[row + threadIdx.x + j * block_size_x + fx], f,
                                     sum[i][j]);
            }
        }
    }

#pragma unroll
    for (int i = 0; i < tile_size_y; ++i) {
        const int y = y0 + threadIdx.y + i * block_size_y;
#pragma unroll
        for (int j = 0; j < tile_size_x; ++j) {
            const int x = x0 + threadIdx.x + j * block_size_x;
            if (x < image_width && y < image_height) output[(size_t)y * image_width + x] = sum[i][j];
        }
    }
}
