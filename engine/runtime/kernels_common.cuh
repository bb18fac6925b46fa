// What the engine's own CUDA kernels share (kernels_layers.cu, kernels_loss.cu, kernels_optim.cu):
// the block size, the grid for n elements and the grid-stride loop.
//
// The engine's own kernels: the elementwise and reduction parts of the layers that are not fused
// into a GEMM's epilogue, the loss and the optimisers. Every matrix product goes through the GEMM
// dispatch instead (Context::gemm). Each launcher states its shapes in backend.h; the kernels
// repeat them. All launch dependently (base/launch.cuh): each starts while the kernel before it on
// its stream finishes, and calls gemm::await_prior_kernels() before touching memory.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "base/launch.cuh"

namespace engine::cuda {

using gemm::await_prior_kernels;
using gemm::launch_kernel;

inline constexpr int kThreads = 256;     // threads per block for the elementwise kernels
inline constexpr int kMaxBlocks = 4096;  // grid-stride loops cover anything larger
inline constexpr int kWarp = 32;
static_assert(kThreads % kWarp == 0, "blocks must hold whole warps");

inline int blocks_for(int64_t n) {
  return static_cast<int>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

// Grid-stride loop over [0, n): the same kernel handles any n with a bounded grid.
#define GRID_STRIDE_LOOP(i, n)                                                           \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

}  // namespace engine::cuda
