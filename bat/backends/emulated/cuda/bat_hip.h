// The HIP compatibility layer of BAT's emulated backend (written for this project).
//
// A HIP kernel source includes "hip/hip_runtime.h"; the emulated backend serves this file
// under that name. It maps HIP's kernel-side names onto CUDA's, so the same text works in
// both places it is used: after bat_cuda.h on the CPU (g++, under the sanitizers), and as
// NVRTC's "hip/hip_runtime.h" when a HIP source is gated (compiled for sm_90: what an Nvidia
// GPU would accept for the same code). HIP accepts CUDA's spellings (threadIdx,
// __syncthreads, __global__, ...) as they are; this file adds HIP's own: hipThreadIdx_x and
// the other hip*Idx_* / hip*Dim_* names, hipLaunchKernelGGL (host side; a kernel never
// calls it), hipError_t with hipSuccess, and the platform macros. Anything else a HIP
// source names (dynamic shared memory through HIP_DYNAMIC_SHARED, atomics, warp
// intrinsics, the runtime API) is not here: bat.backends.emulated.hip names it as missing
// before anything is compiled. Every name this file defines is listed in HIP_NAMES below,
// and that list is what the check reads.
#ifndef BAT_HIP_H
#define BAT_HIP_H

// HIP_NAMES: __HIP_PLATFORM_BAT_EMULATED__ __HIP__ hipThreadIdx_x hipThreadIdx_y hipThreadIdx_z
// HIP_NAMES: hipBlockIdx_x hipBlockIdx_y hipBlockIdx_z hipBlockDim_x hipBlockDim_y hipBlockDim_z
// HIP_NAMES: hipGridDim_x hipGridDim_y hipGridDim_z hipLaunchKernelGGL hipError_t hipSuccess
// HIP_NAMES: hipStream_t

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

#endif  // BAT_HIP_H
