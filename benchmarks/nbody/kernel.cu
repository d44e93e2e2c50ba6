// All-pairs gravitational N-body, one time step, single precision.
// Each thread owns outer_unroll_factor bodies (strided by block_size so loads coalesce)
// and accumulates the acceleration on them from every body j:
//   a_i = sum_j m_j (p_j - p_i) / (|p_j - p_i|^2 + eps2)^(3/2)
// then v_i' = (v_i + a_i dt) * damping and p_i' = p_i + v_i' dt.
// Loop 1 runs over the bodies j (over the block_size bodies cached in shared memory
// when local_mem = 1, over all bodies otherwise) and is unrolled inner_unroll_factor1
// times; loop 2 runs over the thread's own bodies, unrolled inner_unroll_factor2 times
// (0 = no pragma: the compiler decides). use_soa reads positions and masses from four
// separate arrays (x, y, z, m) instead of one float4 per body; vector_type is then the
// number of consecutive bodies read per vector load of each array.
// Macros: the tunable parameters and n_bodies. Output is always array-of-structures.

// UNROLL(n) expands n before it becomes the pragma's text, so the pragma gets the number:
// NVRTC and nvcc both accept `#pragma unroll 4`; nvcc rejects `#pragma unroll name`.
#define DO_PRAGMA(x) _Pragma(#x)
#define UNROLL(n) DO_PRAGMA(unroll n)
#if inner_unroll_factor1 > 0
#define UNROLL1 UNROLL(inner_unroll_factor1)
#else
#define UNROLL1
#endif
#if inner_unroll_factor2 > 0
#define UNROLL2 UNROLL(inner_unroll_factor2)
#else
#define UNROLL2
#endif

#define OU outer_unroll_factor
#define VT vector_type

static_assert(n_bodies % (block_size * OU) == 0,
              "n_bodies must be a multiple of block_size * outer_unroll_factor");
static_assert(use_soa == 1 || VT == 1, "array-of-structures input is read one float4 per body");
static_assert(block_size % VT == 0, "a shared-memory tile is loaded in whole vectors");

struct alignas(4 * VT) vecf {
    float v[VT];
};

// VT consecutive bodies starting at j (a multiple of VT), as (x, y, z, m).
__device__ __forceinline__ void load_group(int j, const float4* __restrict__ pos4,
                                           const float* __restrict__ px,
                                           const float* __restrict__ py,
                                           const float* __restrict__ pz,
                                           const float* __restrict__ pm, float4 out[VT]) {
#if use_soa
    const vecf x = reinterpret_cast<const vecf*>(px)[j / VT];
    const vecf y = reinterpret_cast<const vecf*>(py)[j / VT];
    const vecf z = reinterpret_cast<const vecf*>(pz)[j / VT];
    const vecf m = reinterpret_cast<const vecf*>(pm)[j / VT];
#pragma unroll
    for (int w = 0; w < VT; ++w) out[w] = make_float4(x.v[w], y.v[w], z.v[w], m.v[w]);
#else
    out[0] = pos4[j];
#endif
}

__device__ __forceinline__ void interact(float3& acc, const float4& pi, const float4& pj,
                                         float eps2) {
    const float dx = pj.x - pi.x;
    const float dy = pj.y - pi.y;
    const float dz = pj.z - pi.z;
    const float r2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, eps2)));
    const float inv = rsqrtf(r2);
    const float s = pj.w * inv * inv * inv;
    acc.x = fmaf(s, dx, acc.x);
    acc.y = fmaf(s, dy, acc.y);
    acc.z = fmaf(s, dz, acc.z);
}

extern "C" __global__ void __launch_bounds__(block_size)
nbody_kernel(const float4* __restrict__ pos4, const float* __restrict__ px,
             const float* __restrict__ py, const float* __restrict__ pz,
             const float* __restrict__ pm, const float4* __restrict__ vel,
             float4* __restrict__ pos_out, float4* __restrict__ vel_out, const float dt,
             const float damping, const float eps2) {
    const int base = blockIdx.x * block_size * OU + threadIdx.x;
    float4 pi[OU];
    float3 acc[OU];
#pragma unroll
    for (int k = 0; k < OU; ++k) {
        const int i = base + k * block_size;
#if use_soa
        pi[k] = make_float4(px[i], py[i], pz[i], pm[i]);
#else
        pi[k] = pos4[i];
#endif
        acc[k] = make_float3(0.0f, 0.0f, 0.0f);
    }

#if local_mem
    __shared__ float4 tile[block_size];
    for (int t0 = 0; t0 < n_bodies; t0 += block_size) {
        if (threadIdx.x < block_size / VT) {
            float4 g[VT];
            load_group(t0 + threadIdx.x * VT, pos4, px, py, pz, pm, g);
#pragma unroll
            for (int w = 0; w < VT; ++w) tile[threadIdx.x * VT + w] = g[w];
        }
        __syncthreads();
        UNROLL1
        for (int j = 0; j < block_size; ++j) {
            const float4 pj = tile[j];
            UNROLL2
            for (int k = 0; k < OU; ++k) interact(acc[k], pi[k], pj, eps2);
        }
        __syncthreads();
    }
#else
    UNROLL1
    for (int j = 0; j < n_bodies; j += VT) {
        float4 g[VT];
        load_group(j, pos4, px, py, pz, pm, g);
#pragma unroll
        for (int w = 0; w < VT; ++w) {
            UNROLL2
            for (int k = 0; k < OU; ++k) interact(acc[k], pi[k], g[w], eps2);
        }
    }
#endif

#pragma unroll
    for (int k = 0; k < OU; ++k) {
        const int i = base + k * block_size;
        float4 v = vel[i];
        v.x = (v.x + acc[k].x * dt) * damping;
        v.y = (v.y + acc[k].y * dt) * damping;
        v.z = (v.z + acc[k].z * dt) * damping;
        vel_out[i] = v;
        pos_out[i] = make_float4(pi[k].x + v.x * dt, pi[k].y + v.y * dt, pi[k].z + v.z * dt,
                                 pi[k].w);
    }
}
