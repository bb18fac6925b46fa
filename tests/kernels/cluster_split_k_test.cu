// The cluster way's sum (cluster_split_k_store, kernels/fast/cluster_split_k.cuh) at every cluster
// size from 2 to kMaxClusterSplits, each its own instantiation: block z of a cluster fills its
// partial tile with whole numbers that name (z, row, column), and C must hold their sum over the
// blocks, exactly, inside C's bounds, and its poison everywhere else. Threads past the consumers
// join the cluster's barriers only, as a producer warpgroup does. Needs a GPU with thread block
// clusters (compute capability 9.0 and newer), else skips.
//
// Test names: ClusterSplitK.*
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/cuda_check.h"
#include "base/launch.cuh"
#include "gpu_test.h"
#include "kernels/fast/cluster_split_k.cuh"

namespace {

using gemm::detail::Epilogue;

// A 64×32 partial of row stride 36 (16-byte rows), summed by 128 consumer threads of 160.
constexpr int kBm = 64, kBn = 32, kLd = kBn + 4, kConsumers = 128, kThreads = kConsumers + 32;

// The value block z puts at (row, col) of its partial: whole numbers, so every sum is exact.
__host__ __device__ float partial_value(int z, int row, int col) {
  return float((z + 1) * 4096 + row * kLd + col);
}

// Grid (1, 1, splits) in one cluster: each block stages its partial and joins the sum into c at
// (m0, n0).
__global__ void sum_partials_kernel(Epilogue c, int m0, int n0) {
  gemm::await_prior_kernels();
  __shared__ float4 storage[kBm * kLd / 4];
  float* partial = reinterpret_cast<float*>(storage);
  for (int i = threadIdx.x; i < kBm * kLd; i += blockDim.x)
    partial[i] = i % kLd < kBn ? partial_value(int(blockIdx.z), i / kLd, i % kLd) : NAN;
  __syncthreads();
  gemm::detail::cluster_split_k_store<kBm, kBn, kLd, kConsumers>(c, partial, m0, n0,
                                                                 int(threadIdx.x));
}

// C is m×n (row stride ldc), poisoned with NaN; the tile at (m0, n0) is summed from `splits`
// partials, and every element is checked.
void expect_cluster_sum(int splits, int m, int n, int ldc, int m0, int n0) {
  SCOPED_TRACE("splits " + std::to_string(splits) + ", C " + std::to_string(m) + "×" +
               std::to_string(n) + " (ldc " + std::to_string(ldc) + ") at (" + std::to_string(m0) +
               ", " + std::to_string(n0) + ")");
  std::vector<float> host(size_t(m) * ldc, NAN);
  float* c = nullptr;
  CUDA_CHECK(cudaMalloc(&c, host.size() * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(c, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  const Epilogue epilogue{c, ldc, m, n, 1.0f, 0.0f, ldc % 4 == 0};
  gemm::launch_kernel(sum_partials_kernel,
                      {dim3(1, 1, splits), dim3(kThreads), 0, nullptr, unsigned(splits)}, epilogue,
                      m0, n0);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(host.data(), c, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(c));
  int wrong = 0;
  for (int row = 0; row < m; ++row)
    for (int col = 0; col < ldc; ++col) {
      const float got = host[size_t(row) * ldc + col];
      const int r = row - m0, k = col - n0;
      const bool inside = col < n && r >= 0 && r < kBm && k >= 0 && k < kBn;
      float want = NAN;
      if (inside) {
        want = 0.0f;
        for (int z = 0; z < splits; ++z) want += partial_value(z, r, k);
      }
      if (inside ? got != want : !std::isnan(got)) {
        if (++wrong <= 5)
          ADD_FAILURE() << "C(" << row << ", " << col << ") = " << got << ", want " << want;
      }
    }
  EXPECT_EQ(wrong, 0);
}

TEST(ClusterSplitK, EveryClusterSizeSumsItsPartialsExactly) {
  GPU_TEST_OR_SKIP();
  if (!gemm::detail::clusters_supported())
    GTEST_SKIP() << "thread block clusters need compute capability 9.0 or newer";
  for (int splits = 2; splits <= gemm::detail::kMaxClusterSplits; ++splits) {
    expect_cluster_sum(splits, kBm, kBn, kBn, 0, 0);  // the tile is C: float4 stores
    // A tile past C's last rows and columns, with a row stride that is not a multiple of 4:
    // element stores, and nothing outside C.
    expect_cluster_sum(splits, 100, 50, 53, 64, 32);
  }
}

}  // namespace
