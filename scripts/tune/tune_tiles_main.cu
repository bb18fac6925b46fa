// Times the tile candidates that tune_tiles.sh compiled, beside cuBLAS, and reports each one's
// largest difference from cuBLAS fp32 (a sanity check; the test suite is the correctness proof).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/cuda_check.h"
#include "kernels/launchers.h"

using gemm::Op;
using gemm::Problem;
using LaunchFn = void (*)(const Problem&, cudaStream_t);

struct Candidate {
  const char* name;
  LaunchFn launch;
  bool tf32;
};
#include "candidates.inc"

// Median of 20 event-timed runs after 3 warm-ups, in ms.
static float median_ms(LaunchFn launch, const Problem& p) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < 3; ++i) launch(p, nullptr);
  std::vector<float> times;
  for (int i = 0; i < 20; ++i) {
    CUDA_CHECK(cudaEventRecord(start));
    launch(p, nullptr);
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

int main() {
  for (int n : {2048, 4096}) {
    for (Op op_a : {Op::N, Op::T}) {
      const size_t count = size_t(n) * n;
      std::vector<float> host(count);
      std::mt19937 rng(1);
      std::uniform_real_distribution<float> uniform(-1, 1);
      float *a, *b, *c, *ref;
      for (float** p : {&a, &b, &c, &ref}) CUDA_CHECK(cudaMalloc(p, count * sizeof(float)));
      for (float* dst : {a, b}) {
        for (float& x : host) x = uniform(rng);
        CUDA_CHECK(cudaMemcpy(dst, host.data(), count * sizeof(float), cudaMemcpyHostToDevice));
      }
      Problem p{op_a, Op::N, n, n, n, 1.0f, a, n, b, n, 0.0f, ref, n};
      const float cublas_ms = median_ms(gemm::detail::launch_cublas, p);
      const float cublas_tf32_ms = median_ms(gemm::detail::launch_cublas_tf32, p);
      gemm::detail::launch_cublas(p, nullptr);
      std::vector<float> want(count);
      CUDA_CHECK(cudaMemcpy(want.data(), ref, count * sizeof(float), cudaMemcpyDeviceToHost));
      const double flop = 2.0 * n * n * n;
      std::printf("%d %c%c cublas %.1f TF  cublas_tf32 %.1f TF\n", n, char(op_a), 'N',
                  flop / cublas_ms / 1e9, flop / cublas_tf32_ms / 1e9);
      p.c = c;
      for (const Candidate& cand : kCandidates) {
        const float ms = median_ms(cand.launch, p);
        CUDA_CHECK(cudaMemcpy(host.data(), c, count * sizeof(float), cudaMemcpyDeviceToHost));
        double max_diff = 0;
        for (size_t i = 0; i < count; ++i)
          max_diff = std::max(max_diff, double(std::fabs(host[i] - want[i])));
        const float base = cand.tf32 ? cublas_tf32_ms : cublas_ms;
        std::printf("  %s %.1f TF  %.1f%% of %s  maxerr %.2e\n", cand.name, flop / ms / 1e9,
                    100.0 * base / ms, cand.tf32 ? "cublas_tf32" : "cublas", max_diff);
      }
      for (float* p : {a, b, c, ref}) CUDA_CHECK(cudaFree(p));
    }
  }
  return 0;
}
