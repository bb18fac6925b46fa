// The host side of split-K through a cluster (cluster_split_k.cuh).
#include <map>
#include <mutex>
#include <tuple>

#include "kernels/fast/cluster_split_k.cuh"

namespace gemm::detail {

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

}  // namespace gemm::detail
