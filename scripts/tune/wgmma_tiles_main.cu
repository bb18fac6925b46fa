// Times the wgmma tile candidates that wgmma_tiles.sh compiled, beside cuBLAS fp32 and TF32, and
// reports each one's largest difference from cuBLAS fp32 (a sanity check; TF32 differs by about
// 1e-2 at these K; the test suite is the correctness proof).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/cuda_check.h"
#include "kernels/launchers.h"
#include "scripts/tune/median_ms.h"

using gemm::Op;
using gemm::Problem;
using LaunchFn = void (*)(const Problem&, cudaStream_t);

struct Candidate {
  const char* name;
  LaunchFn launch;
};
#include "candidates.inc"

int main() {
  struct Shape {
    int m, n, k;
    Op a, b;
  };
  const Shape shapes[] = {{4096, 4096, 4096, Op::N, Op::N}, {4096, 4096, 4096, Op::N, Op::T},
                          {4096, 4096, 4096, Op::T, Op::N}, {8192, 8192, 8192, Op::N, Op::N},
                          {2048, 2048, 2048, Op::N, Op::N}, {256, 1024, 784, Op::N, Op::T},
                          {256, 784, 1024, Op::N, Op::N},   {1024, 784, 256, Op::T, Op::N}};
  for (const Shape& s : shapes) {
    const int lda = s.a == Op::N ? s.k : s.m, ldb = s.b == Op::N ? s.n : s.k;
    const size_t na = size_t(s.m) * s.k, nb = size_t(s.k) * s.n, nc = size_t(s.m) * s.n;
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> uniform(-1, 1);
    std::vector<float> ha(na), hb(nb), want(nc), got(nc);
    for (float& x : ha) x = uniform(rng);
    for (float& x : hb) x = uniform(rng);
    float *a, *b, *c, *ref;
    CUDA_CHECK(cudaMalloc(&a, na * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&b, nb * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&c, nc * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&ref, nc * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(a, ha.data(), na * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(b, hb.data(), nb * sizeof(float), cudaMemcpyHostToDevice));
    Problem p{s.a, s.b, s.m, s.n, s.k, 1.0f, a, lda, b, ldb, 0.0f, ref, s.n};
    const float cublas_ms = median_ms(gemm::detail::launch_cublas, p);
    const float cublas_tf32_ms = median_ms(gemm::detail::launch_cublas_tf32, p);
    gemm::detail::launch_cublas(p, nullptr);
    CUDA_CHECK(cudaMemcpy(want.data(), ref, nc * sizeof(float), cudaMemcpyDeviceToHost));
    const double flop = 2.0 * s.m * s.n * s.k;
    std::printf("%dx%dx%d %c%c cublas %.1f TF  cublas_tf32 %.1f TF\n", s.m, s.n, s.k, char(s.a),
                char(s.b), flop / cublas_ms / 1e9, flop / cublas_tf32_ms / 1e9);
    p.c = c;
    for (const Candidate& cand : kCandidates) {
      CUDA_CHECK(cudaMemset(c, 0xff, nc * sizeof(float)));  // NaN: a missed element shows
      const float ms = median_ms(cand.launch, p);
      CUDA_CHECK(cudaMemcpy(got.data(), c, nc * sizeof(float), cudaMemcpyDeviceToHost));
      double max_err = 0;
      for (size_t i = 0; i < nc; ++i) {
        const double e = std::fabs(double(got[i]) - want[i]);
        max_err = std::isnan(e) ? NAN : std::max(max_err, e);
        if (std::isnan(max_err)) break;
      }
      std::printf("  %-14s %7.1f TF  %5.1f%% of cublas  %5.1f%% of cublas_tf32  maxerr %.2e\n",
                  cand.name, flop / ms / 1e9, 100.0 * cublas_ms / ms, 100.0 * cublas_tf32_ms / ms,
                  max_err);
    }
    for (float* q : {a, b, c, ref}) CUDA_CHECK(cudaFree(q));
  }
  return 0;
}
