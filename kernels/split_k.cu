// Workspace and reduction of split-K (split_k.cuh).
#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

#include "kernels/split_k.cuh"

namespace gemm::detail {
namespace {

// partials: splits × M×N, densely packed. One thread per element of C.
__global__ void split_k_reduce_kernel(const float* partials, int splits, Epilogue c) {
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

bool clusters_supported() {
  int device = 0, major = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 9;
}

bool clusters_fit_at_once(const void* kernel, long clusters, int cluster_size, int threads,
                          int smem_bytes) {
  static std::mutex mutex;
  static std::map<std::tuple<const void*, int, int>, int> max_active;  // kernel, size, device
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(kernel, cluster_size, device);
  auto found = max_active.find(key);
  if (found == max_active.end()) {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(1, 1, cluster_size);
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = size_t(smem_bytes);
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = 1;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = cluster_size;
    config.attrs = &cluster;
    config.numAttrs = 1;
    int count = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&count, kernel, &config));
    found = max_active.emplace(key, count).first;
  }
  return clusters <= found->second;
}

void launch_split_k_reduce(const Problem& p, const float* partials, int splits,
                           cudaStream_t stream) {
  constexpr int kThreads = 256;
  if (p.m > 65535) throw Error("gemm: split-K reduction supports M up to 65535");
  const dim3 grid((p.n + kThreads - 1) / kThreads, p.m);
  split_k_reduce_kernel<<<grid, kThreads, 0, stream>>>(partials, splits, epilogue(p));
  CUDA_CHECK_LAUNCH();
}

}  // namespace gemm::detail
