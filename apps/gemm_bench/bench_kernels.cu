// Device helpers for gemm_bench (see bench_kernels.h). Grid-stride loops over dense arrays.
#include <cmath>
#include <vector>

#include "apps/gemm_bench/bench_kernels.h"
#include "base/cuda_check.h"
#include "base/device_buffer.h"
#include "kernels/gemm.h"

namespace bench {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 1024;

int blocks_for(std::size_t n) {
  const std::size_t b = (n + kThreads - 1) / kThreads;
  return int(b < kMaxBlocks ? (b == 0 ? 1 : b) : kMaxBlocks);
}

__device__ __forceinline__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__global__ void fill_kernel(float* p, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint64_t h = splitmix64(seed ^ splitmix64(i));
    // 24 random bits → (0, 1]; magnitude in [2^-10, 1], random sign.
    const float u = float((h >> 40) + 1) * (1.0f / 16777216.0f);
    const float mag = 1.0f / 1024.0f + u * (1.0f - 1.0f / 1024.0f);
    p[i] = (h & 1) ? mag : -mag;
  }
}

__global__ void abs_kernel(float* dst, const float* src, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    dst[i] = fabsf(src[i]);
}

// One (worst ratio, index, bad count) per block; the host reduces over blocks.
__global__ void __launch_bounds__(kThreads)
    compare_kernel(const float* got, const float* want, const float* scale, std::size_t n,
                   float tol, float tiny, float* block_ratio, unsigned long long* block_index,
                   unsigned long long* block_bad) {
  __shared__ float s_ratio[kThreads];
  __shared__ unsigned long long s_index[kThreads];
  __shared__ unsigned long long s_bad[kThreads];
  float worst = -1.0f;
  unsigned long long worst_i = 0, bad = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float g = got[i];
    const float bound = tol * scale[i] + tiny;
    const float r = isfinite(g) ? fabsf(g - want[i]) / bound : INFINITY;
    if (!(r <= 1.0f)) ++bad;
    if (!(r <= worst)) {  // also takes NaN, should want[i] ever be one
      worst = isnan(r) ? INFINITY : r;
      worst_i = i;
    }
  }
  s_ratio[threadIdx.x] = worst;
  s_index[threadIdx.x] = worst_i;
  s_bad[threadIdx.x] = bad;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      if (s_ratio[threadIdx.x + stride] > s_ratio[threadIdx.x]) {
        s_ratio[threadIdx.x] = s_ratio[threadIdx.x + stride];
        s_index[threadIdx.x] = s_index[threadIdx.x + stride];
      }
      s_bad[threadIdx.x] += s_bad[threadIdx.x + stride];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    block_ratio[blockIdx.x] = s_ratio[0];
    block_index[blockIdx.x] = s_index[0];
    block_bad[blockIdx.x] = s_bad[0];
  }
}

}  // namespace

void fill_random(float* p, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
  fill_kernel<<<blocks_for(n), kThreads, 0, stream>>>(p, n, seed);
  CUDA_CHECK_LAUNCH();
}

void abs_copy(float* dst, const float* src, std::size_t n, cudaStream_t stream) {
  abs_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dst, src, n);
  CUDA_CHECK_LAUNCH();
}

Comparison compare(const float* got, const float* want, const float* scale, std::size_t n,
                   double tol, cudaStream_t stream) {
  const int blocks = blocks_for(n);
  const float tiny = float(gemm::kToleranceFloor);
  gemm::DeviceBuffer<float> d_ratio(blocks);
  gemm::DeviceBuffer<unsigned long long> d_index(blocks), d_bad(blocks);
  compare_kernel<<<blocks, kThreads, 0, stream>>>(got, want, scale, n, float(tol), tiny,
                                                  d_ratio.data(), d_index.data(), d_bad.data());
  CUDA_CHECK_LAUNCH();
  const std::vector<float> ratio = d_ratio.download(stream);
  const std::vector<unsigned long long> index = d_index.download(stream),
                                        bad = d_bad.download(stream);

  Comparison out;
  out.worst_ratio = -1.0;
  for (int b = 0; b < blocks; ++b) {
    out.bad += bad[b];
    if (ratio[b] > out.worst_ratio) {
      out.worst_ratio = ratio[b];
      out.worst_index = index[b];
    }
  }
  // The worst element's values, for the report.
  CUDA_CHECK(cudaMemcpy(&out.got, got + out.worst_index, sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&out.want, want + out.worst_index, sizeof(float), cudaMemcpyDeviceToHost));
  float s = 0;
  CUDA_CHECK(cudaMemcpy(&s, scale + out.worst_index, sizeof(float), cudaMemcpyDeviceToHost));
  out.bound = float(tol) * s + tiny;
  return out;
}

}  // namespace bench
