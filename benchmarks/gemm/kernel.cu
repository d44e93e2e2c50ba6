// GEMM, C = alpha * A * B + beta * C, single precision, all matrices column-major:
//   a: A^T as K rows of M floats, b: B as K rows of N floats, c: C^T as N rows of M floats
// (so that M and N, the dimensions vectorised by VWM and VWN, are contiguous).
// Each block of MDIMC x NDIMC threads computes an MWG x NWG tile of C; each thread
// owns MWG/MDIMC x NWG/NDIMC elements, as VWM-wide vectors along M and VWN-wide
// vectors along N, interleaved with the other threads so loads stay coalesced.
// SA / SB stage the KWG-deep slices of A / B in shared memory; for those loads the
// block's threads are re-shaped as MDIMA x (threads / MDIMA) (A) and
// NDIMB x (threads / NDIMB) (B). KWI unrolls the loop inside a K-tile.
// Macros: the tunable parameters above plus the problem size M, N, K.

#define DO_PRAGMA(x) _Pragma(#x)
#define UNROLL(n) DO_PRAGMA(unroll n)

#define THREADS (MDIMC * NDIMC)
#define MWI (MWG / MDIMC)
#define NWI (NWG / NDIMC)
#define KDIMA (THREADS / MDIMA)
#define KDIMB (THREADS / NDIMB)

static_assert(PRECISION == 32, "only single precision (PRECISION = 32) is implemented");
static_assert(STRM == 0 && STRN == 0, "only the non-strided layouts (STRM = STRN = 0) exist");
static_assert(M % MWG == 0 && N % NWG == 0 && K % KWG == 0,
              "the problem size must be a multiple of the tile MWG x NWG x KWG");
static_assert(KWG % KWI == 0, "KWI must divide KWG");
static_assert(MWG % (MDIMC * VWM) == 0 && NWG % (NDIMC * VWN) == 0,
              "a thread computes whole vectors of its tile");
static_assert(MWG % (MDIMA * VWM) == 0 && KWG % KDIMA == 0, "the A tile loads evenly");
static_assert(NWG % (NDIMB * VWN) == 0 && KWG % KDIMB == 0, "the B tile loads evenly");

template <int W>
struct alignas(4 * W) vec {
    float v[W];
};
typedef vec<VWM> realM;
typedef vec<VWN> realN;

// Row k of a (A^T) within the block's M-range, as VWM-vectors.
__device__ __forceinline__ const realM* a_row(const float* a, int k, int m0) {
    return reinterpret_cast<const realM*>(a + (size_t)k * M + m0);
}

__device__ __forceinline__ const realN* b_row(const float* b, int k, int n0) {
    return reinterpret_cast<const realN*>(b + (size_t)k * N + n0);
}

extern "C" __global__ void __launch_bounds__(THREADS)
gemm_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
            const float alpha, const float beta) {
    const int tid_m = threadIdx.x;
    const int tid_n = threadIdx.y;
    const int m0 = blockIdx.x * MWG;
    const int n0 = blockIdx.y * NWG;
#if SA || SB
    const int tid = tid_n * MDIMC + tid_m;
#endif
#if SA
    __shared__ realM alm[KWG * (MWG / VWM)];
#endif
#if SB
    __shared__ realN blm[KWG * (NWG / VWN)];
#endif

    float acc[NWI][MWI];
#pragma unroll
    for (int ni = 0; ni < NWI; ++ni) {
#pragma unroll
        for (int mi = 0; mi < MWI; ++mi) acc[ni][mi] = 0.0f;
    }

    for (int k0 = 0; k0 < K; k0 += KWG) {
#if SA
        {
            const int la_m = tid % MDIMA;
            const int la_k = tid / MDIMA;
#pragma unroll
            for (int ka = 0; ka < KWG / KDIMA; ++ka) {
#pragma unroll
                for (int ma = 0; ma < MWG / (MDIMA * VWM); ++ma) {
                    const int kk = ka * KDIMA + la_k;
                    const int mv = ma * MDIMA + la_m;
                    alm[kk * (MWG / VWM) + mv] = a_row(a, k0 + kk, m0)[mv];
                }
            }
        }
#endif
#if SB
        {
            const int lb_n = tid % NDIMB;
            const int lb_k = tid / NDIMB;
#pragma unroll
            for (int kb = 0; kb < KWG / KDIMB; ++kb) {
#pragma unroll
                for (int nb = 0; nb < NWG / (NDIMB * VWN); ++nb) {
                    const int kk = kb * KDIMB + lb_k;
                    const int nv = nb * NDIMB + lb_n;
                    blm[kk * (NWG / VWN) + nv] = b_row(b, k0 + kk, n0)[nv];
                }
            }
        }
#endif
#if SA || SB
        __syncthreads();
#endif
        for (int kw = 0; kw < KWG; kw += KWI) {
            UNROLL(KWI)
            for (int ku = 0; ku < KWI; ++ku) {
                const int kk = kw + ku;
                float apm[MWI];
                float bpm[NWI];
#pragma unroll
                for (int mi = 0; mi < MWI / VWM; ++mi) {
                    const int mv = mi * MDIMC + tid_m;
#if SA
                    const realM va = alm[kk * (MWG / VWM) + mv];
#else
                    const realM va = a_row(a, k0 + kk, m0)[mv];
#endif
#pragma unroll
                    for (int w = 0; w < VWM; ++w) apm[mi * VWM + w] = va.v[w];
                }
#pragma unroll
                for (int ni = 0; ni < NWI / VWN; ++ni) {
                    const int nv = ni * NDIMC + tid_n;
#if SB
                    const realN vb = blm[kk * (NWG / VWN) + nv];
#else
                    const realN vb = b_row(b, k0 + kk, n0)[nv];
#endif
#pragma unroll
                    for (int w = 0; w < VWN; ++w) bpm[ni * VWN + w] = vb.v[w];
                }
#pragma unroll
                for (int ni = 0; ni < NWI; ++ni) {
#pragma unroll
                    for (int mi = 0; mi < MWI; ++mi) acc[ni][mi] = fmaf(apm[mi], bpm[ni], acc[ni][mi]);
                }
            }
        }
#if SA || SB
        __syncthreads();
#endif
    }

    // acc[ni][mi] is C(m, n) with m = (mi / VWM * MDIMC + tid_m) * VWM + mi % VWM, same for n.
#pragma unroll
    for (int ni = 0; ni < NWI / VWN; ++ni) {
#pragma unroll
        for (int wn = 0; wn < VWN; ++wn) {
            const int n = (ni * NDIMC + tid_n) * VWN + wn;
            realM* row = reinterpret_cast<realM*>(c + (size_t)(n0 + n) * M + m0);
#pragma unroll
            for (int mi = 0; mi < MWI / VWM; ++mi) {
                const int mv = mi * MDIMC + tid_m;
                const realM old = row[mv];
                realM out;
#pragma unroll
                for (int w = 0; w < VWM; ++w)
                    out.v[w] = alpha * acc[ni * VWN + wn][mi * VWM + w] + beta * old.v[w];
                row[mv] = out;
            }
        }
    }
}
