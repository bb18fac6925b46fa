// tune_wgmma_tiles: times the production wgmma pipeline's candidate tiles (wgmma_candidates.h),
// and the pipeline, tf32_fast, tf32x3_fast and step 11 as shipped, beside cuBLAS fp32 and TF32,
// each through gemm_bench's timing harness at 2048³–8192³ and the MLP's shapes; reports each one's
// largest difference from cuBLAS fp32 (a sanity check; TF32 differs by about 1e-2 at these K; the
// test suite is the correctness proof). The tiles kernels/fast/wgmma_pipeline_tiles.cuh ships came
// from this sweep (docs/results/tuning_wgmma_h200.txt). Run by scripts/tuning/tune.sh wgmma.
#include <cstdio>
#include <vector>

#include "kernels/fast/k_major_copies.h"
#include "kernels/fast/wgmma_pipeline.h"
#include "tools/tune/candidate.h"
#include "tools/tune/tune_case.h"

int main() {
  using gemm::Op;
  if (!tune::device_ready("wgmma_tiles", true)) return 2;
  const bench::Shape shapes[] = {{4096, 4096, 4096, Op::N, Op::N}, {4096, 4096, 4096, Op::N, Op::T},
                                 {4096, 4096, 4096, Op::T, Op::N}, {8192, 8192, 8192, Op::N, Op::N},
                                 {2048, 2048, 2048, Op::N, Op::N}, {256, 1024, 784, Op::N, Op::T},
                                 {256, 784, 1024, Op::N, Op::N},   {1024, 784, 256, Op::T, Op::N},
                                 {512, 4096, 4096, Op::N, Op::T},  {512, 4096, 4096, Op::N, Op::N},
                                 {4096, 4096, 512, Op::T, Op::N}};
  struct Entry {
    const char* name;
    tune::LaunchFn launch;
  };
  std::vector<Entry> entries;
  for (const tune::Candidate& cand : tune::candidates())
    entries.push_back({cand.name, cand.launch});
  entries.push_back({"pipeline", gemm::detail::launch_tf32_pipeline});
  entries.push_back({"tf32_fast", gemm::detail::launch_tf32_fast});
  entries.push_back({"x3_pipeline", gemm::detail::launch_tf32x3_pipeline});
  entries.push_back({"tf32x3_fast", gemm::detail::launch_tf32x3_fast});
  entries.push_back({"tf32x3_ws", gemm::detail::launch_tf32x3_ws});
  // tf32x3_fast before the register-A kernel took NN (and TN on A's copy).
  entries.push_back({"x3_before", [](const gemm::Problem& p, cudaStream_t s) {
                       if (p.op_a == gemm::Op::T && p.op_b == gemm::Op::N)
                         gemm::detail::launch_tn_on_k_major_copies(
                             p, s, gemm::detail::launch_tf32x3_pipeline);
                       else
                         gemm::detail::launch_tf32x3_pipeline(p, s);
                     }});
  try {
    bench::Timer timer(nullptr);
    for (const bench::Shape& s : shapes) {
      tune::Case c(s, timer);
      const tune::Case::Baselines cublas = c.time_cublas();
      for (const Entry& e : entries) {
        const double ms = c.median_ms(e.launch);
        std::printf("  %-14s %7.1f TF  %5.1f%% of cublas  %5.1f%% of cublas_tf32  maxerr %.2e\n",
                    e.name, c.tflops(ms), 100.0 * cublas.fp32_ms / ms, 100.0 * cublas.tf32_ms / ms,
                    c.max_error());
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wgmma_tiles: %s\n", e.what());
    return 1;
  }
  return 0;
}
