// The CUDA compatibility header of BAT's emulated backend (written for this project).
//
// A benchmark's kernel.cu, compiled by the host C++ compiler after this header, runs on the
// CPU: bat_runtime.cpp runs the blocks of a launch one after another and every CUDA thread
// of a block as a fiber of one OS thread; __syncthreads() is a real barrier among the
// fibers of a block. What is modelled: the qualifiers __global__, __device__, __host__,
// __shared__ (a static variable: one instance, used by one block at a time, poisoned before
// every block), __constant__ (a global the runner's symbol data is copied into),
// __forceinline__, __noinline__ and __launch_bounds__; threadIdx, blockIdx, blockDim and
// gridDim; __syncthreads and __threadfence; the vector types (char .. double, 1 to 4
// components, CUDA's alignments) with their make_* functions; __ldg, rsqrtf, rsqrt, the
// fast-math intrinsics __fdividef, __expf, __logf, __powf, __sinf, __cosf, __saturatef
// (computed exactly), and CUDA's integer and floating-point min and max. Not modelled:
// warps (__shfl, __ballot, warp-synchronous code), atomics, dynamic shared memory,
// textures, cooperative groups; a kernel using them does not compile here.
#ifndef BAT_CUDA_H
#define BAT_CUDA_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __shared__ static
#define __constant__

// Identifiers here are long or prefixed: a search space's -D macros (M, N, K, ...) would
// replace short ones.
#define BAT_VECTOR(bat_scalar, bat_name, bat_align2, bat_align4)                            \
    struct bat_name##1 { bat_scalar x; };                                                   \
    struct alignas(bat_align2) bat_name##2 { bat_scalar x, y; };                            \
    struct bat_name##3 { bat_scalar x, y, z; };                                             \
    struct alignas(bat_align4) bat_name##4 { bat_scalar x, y, z, w; };                     \
    inline bat_name##1 make_##bat_name##1(bat_scalar x) { return bat_name##1{x}; }          \
    inline bat_name##2 make_##bat_name##2(bat_scalar x, bat_scalar y) { return bat_name##2{x, y}; } \
    inline bat_name##3 make_##bat_name##3(bat_scalar x, bat_scalar y, bat_scalar z) {      \
        return bat_name##3{x, y, z};                                                        \
    }                                                                                       \
    inline bat_name##4 make_##bat_name##4(bat_scalar x, bat_scalar y, bat_scalar z, bat_scalar w) { \
        return bat_name##4{x, y, z, w};                                                     \
    }

BAT_VECTOR(signed char, char, 2, 4)
BAT_VECTOR(unsigned char, uchar, 2, 4)
BAT_VECTOR(short, short, 4, 8)
BAT_VECTOR(unsigned short, ushort, 4, 8)
BAT_VECTOR(int, int, 8, 16)
BAT_VECTOR(unsigned int, uint, 8, 16)
BAT_VECTOR(long long, longlong, 16, 16)
BAT_VECTOR(unsigned long long, ulonglong, 16, 16)
BAT_VECTOR(float, float, 8, 16)
BAT_VECTOR(double, double, 16, 16)
#undef BAT_VECTOR

struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
};

namespace bat_emu {
// Where the running fiber is; the scheduler sets it before it switches to a fiber.
struct Indices {
    uint3 thread;
    uint3 block;
    dim3 block_dim;
    dim3 grid_dim;
};
extern Indices current;
// __syncthreads(): wait until every thread of the block is at this barrier (same file and line).
void barrier(const char* file, int line);
}  // namespace bat_emu

#define threadIdx (::bat_emu::current.thread)
#define blockIdx (::bat_emu::current.block)
#define blockDim (::bat_emu::current.block_dim)
#define gridDim (::bat_emu::current.grid_dim)
#define __syncthreads() ::bat_emu::barrier(__FILE__, __LINE__)

// One OS thread runs every fiber, so memory is always coherent.
inline void __threadfence() {}
inline void __threadfence_block() {}

template <class bat_type>
inline bat_type __ldg(const bat_type* address) { return *address; }

inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float __fdividef(float x, float y) { return x / y; }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }

inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned int min(unsigned int a, unsigned int b) { return a < b ? a : b; }
inline unsigned int max(unsigned int a, unsigned int b) { return a > b ? a : b; }
inline unsigned int min(int a, unsigned int b) { return min((unsigned int)a, b); }
inline unsigned int max(int a, unsigned int b) { return max((unsigned int)a, b); }
inline unsigned int min(unsigned int a, int b) { return min(a, (unsigned int)b); }
inline unsigned int max(unsigned int a, int b) { return max(a, (unsigned int)b); }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }

#endif  // BAT_CUDA_H
