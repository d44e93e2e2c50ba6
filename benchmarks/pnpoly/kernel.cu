// Pnpoly: point-in-polygon by the crossing number (even-odd rule), one bit per point.
// The polygon's n_vertices vertices live in constant memory (`vertices`, copied by the
// host). Each thread tests tile_size points, strided by block_size_x so loads coalesce.
// For every edge (vj, vk) a point p crosses it when p.y lies between vj.y and vk.y and
// p.x < x-intercept. between_method picks one of four formulations of "between"
// (all exactly equivalent, ties included); use_method picks how inside/outside is
// tracked: 0 flips a flag under a branch, 1 xors a predicate (branch-free), 2 counts
// crossings and takes the count's parity.
// Macros: the tunable parameters plus n_points and n_vertices.

#define DO_PRAGMA(x) _Pragma(#x)

__constant__ float2 vertices[n_vertices];

__device__ __forceinline__ bool between(float yj, float yk, float py) {
#if between_method == 0
    return (yj > py) != (yk > py);
#elif between_method == 1
    return ((yj > py) && (yk <= py)) || ((yj <= py) && (yk > py));
#elif between_method == 2
    return (py < yj) == (yk <= py);
#elif between_method == 3
    return ((int)(yj > py) + (int)(yk > py)) == 1;
#else
#error "between_method must be 0, 1, 2 or 3"
#endif
}

extern "C" __global__ void __launch_bounds__(block_size_x)
pnpoly_kernel(int* __restrict__ bitmap, const float2* __restrict__ points) {
    const int base = blockIdx.x * block_size_x * tile_size + threadIdx.x;
    float2 p[tile_size];
    int c[tile_size];
#pragma unroll
    for (int t = 0; t < tile_size; ++t) {
        const int i = base + t * block_size_x;
        p[t] = i < n_points ? points[i] : make_float2(0.0f, 0.0f);
        c[t] = 0;
    }
    int k = n_vertices - 1;
    for (int j = 0; j < n_vertices; k = j++) {
        const float2 vj = vertices[j];
        const float2 vk = vertices[k];
#pragma unroll
        for (int t = 0; t < tile_size; ++t) {
            const bool b = between(vj.y, vk.y, p[t].y);
#if use_method == 0
            if (b && p[t].x < (vk.x - vj.x) * (p[t].y - vj.y) / (vk.y - vj.y) + vj.x) c[t] = !c[t];
#elif use_method == 1
            const float xint = (vk.x - vj.x) * (p[t].y - vj.y) / (vk.y - vj.y) + vj.x;
            c[t] ^= (int)(b & (p[t].x < xint));
#elif use_method == 2
            const float xint = (vk.x - vj.x) * (p[t].y - vj.y) / (vk.y - vj.y) + vj.x;
            c[t] += (int)(b && p[t].x < xint);
#else
#error "use_method must be 0, 1 or 2"
#endif
        }
    }
#pragma unroll
    for (int t = 0; t < tile_size; ++t) {
        const int i = base + t * block_size_x;
        if (i < n_points) bitmap[i] = c[t] & 1;
    }
}
