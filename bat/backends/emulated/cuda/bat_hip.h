// The HIP compatibility layer of BAT's emulated backend (written for this project).
//
// A HIP kernel source includes "hip/hip_runtime.h"; the emulated backend serves this file
// under that name. It maps HIP's kernel-side names onto CUDA's, so the same text works in
// both places it is used: after bat_cuda.h on the CPU (g++, under the sanitizers), and as
// NVRTC's "hip/hip_runtime.h" when a HIP source is gated (compiled for sm_90: what an Nvidia
// GPU would accept for the same code). HIP accepts CUDA's spellings (threadIdx,
// __syncthreads, __global__, ...) as they are; this file adds HIP's own: hipThreadIdx_x and
// the other hip*Idx_* / hip*Dim_* names, hipLaunchKernelGGL (host side; a kernel never
// calls it), hipError_t with hipSuccess, the platform macros, and dynamic shared memory:
// HIP_DYNAMIC_SHARED(type, name) is HIP's `extern __shared__ type name[]` for NVRTC, and on
// the CPU a name for the launch's dynamic shared memory (bat_runtime.cpp: an array of the
// launch's shared bytes, poisoned before every block, its end guarded by the address
// sanitizer), at file scope or in a kernel. Anything else a HIP source names (atomics, warp
// intrinsics, the runtime API) is not here: bat.backends.emulated.hip names it as missing
// before anything is compiled. Every name this file defines is listed in HIP_NAMES below,
// and that list is what the check reads.
#ifndef BAT_HIP_H
#define BAT_HIP_H

// HIP_NAMES: __HIP_PLATFORM_BAT_EMULATED__ __HIP__ hipThreadIdx_x hipThreadIdx_y hipThreadIdx_z
// HIP_NAMES: hipBlockIdx_x hipBlockIdx_y hipBlockIdx_z hipBlockDim_x hipBlockDim_y hipBlockDim_z
// HIP_NAMES: hipGridDim_x hipGridDim_y hipGridDim_z hipLaunchKernelGGL hipError_t hipSuccess
// HIP_NAMES: hipStream_t HIP_DYNAMIC_SHARED HIP_DYNAMIC_SHARED_ATTRIBUTE

#define __HIP_PLATFORM_BAT_EMULATED__ 1
#define __HIP__ 1

#define hipThreadIdx_x (threadIdx.x)
#define hipThreadIdx_y (threadIdx.y)
#define hipThreadIdx_z (threadIdx.z)
#define hipBlockIdx_x (blockIdx.x)
#define hipBlockIdx_y (blockIdx.y)
#define hipBlockIdx_z (blockIdx.z)
#define hipBlockDim_x (blockDim.x)
#define hipBlockDim_y (blockDim.y)
#define hipBlockDim_z (blockDim.z)
#define hipGridDim_x (gridDim.x)
#define hipGridDim_y (gridDim.y)
#define hipGridDim_z (gridDim.z)

#define hipLaunchKernelGGL(bat_kernel, bat_grid, bat_block, bat_shared, bat_stream, ...) \
    bat_kernel<<<(bat_grid), (bat_block), (bat_shared), (bat_stream)>>>(__VA_ARGS__)

typedef int hipError_t;
#define hipSuccess 0
typedef void* hipStream_t;

#define HIP_DYNAMIC_SHARED_ATTRIBUTE
#if defined(__CUDACC__)  // NVRTC: HIP's own definition
#define HIP_DYNAMIC_SHARED(bat_type, bat_name) extern __shared__ bat_type bat_name[];
#else  // the CPU: a reference to the runtime's pointer, so it follows every launch
namespace bat_emu {
extern void* dynamic_shared;
}
#define HIP_DYNAMIC_SHARED(bat_type, bat_name) \
    static bat_type* const& bat_name = reinterpret_cast<bat_type* const&>(::bat_emu::dynamic_shared);
#endif

#endif  // BAT_HIP_H
