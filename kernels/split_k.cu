// Workspace and reduction of split-K (split_k.cuh).
#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

#include "base/launch.cuh"
#include "kernels/launchers.h"
#include "kernels/split_k.cuh"

namespace gemm::detail {
namespace {

// partials: splits × M×N, densely packed. One thread per element of C. Launched dependently
// (launch.cuh): it starts while the slices' kernel finishes.
__global__ void split_k_reduce_kernel(const float* partials, int splits, Epilogue c) {
  await_prior_kernels();
  const int row = blockIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= c.n) return;
  const int64_t slice = int64_t(c.m) * c.n;
  const float* p = partials + int64_t(row) * c.n + col;
  float sum = 0.0f;
  for (int z = 0; z < splits; ++z) sum += p[z * slice];
  c.store(row, col, sum);
}

struct Workspace {
  float* data = nullptr;
  size_t floats = 0;
};

}  // namespace

float* stream_workspace(WorkspaceUse use, size_t floats, cudaStream_t stream) {
  if (WorkspaceAllocator* allocator = installed_workspace_allocator())
    return static_cast<float*>(allocator->allocate(floats * sizeof(float), stream));
  static std::mutex mutex;
  static std::map<std::tuple<WorkspaceUse, int, cudaStream_t>, Workspace> workspaces;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  Workspace& ws = workspaces[{use, device, stream}];
  if (ws.floats < floats) {
    // The outgrown buffer is not freed: a captured CUDA graph may still point at it, and freeing
    // would synchronise. Growing at least 2× keeps what is left behind below the final size.
    const size_t grown = std::max(floats, 2 * ws.floats);
    float* data = nullptr;
    CUDA_CHECK(cudaMalloc(&data, grown * sizeof(float)));
    ws.data = data;
    ws.floats = grown;
  }
  return ws.data;
}

void launch_split_k_reduce(const Problem& p, const float* partials, int splits,
                           cudaStream_t stream) {
  constexpr int kThreads = 256;
  if (p.m > 65535) throw Error("gemm: split-K reduction supports M up to 65535");
  const dim3 grid((p.n + kThreads - 1) / kThreads, p.m);
  launch_kernel(split_k_reduce_kernel, {grid, dim3(kThreads), 0, stream}, partials, splits,
                epilogue(p));
}

}  // namespace gemm::detail
