// tune_tf32x3_tiles: times tf32x3_fast's split-tile candidates (tf32x3_candidates.h) at the two
// MLPs' GEMMs with a dimension of 10, beside the shipped variants. At weight-gradient (TN) shapes:
// the wgmma pipeline (kernels/fast/wgmma_pipeline.h) in 3×TF32 and in TF32 alone, on K-major
// copies, and as tf32x3_fast and tf32_fast choose, which sets their thresholds, and the
// register-A kernel on A's copy alone. At NN shapes: the TF32 pipeline against the register-A
// kernel, which sets tf32_fast's NN rule. Run by scripts/tuning/tune.sh tf32x3. Each beside cuBLAS
// fp32 (and TF32) through gemm_bench's timing harness, with its largest difference from cuBLAS fp32
// (a sanity check; the test suite is the correctness proof; TF32 differs by about 1e-2).
#include <cstdio>
#include <vector>

#include "kernels/fast/k_major_copies.h"
#include "kernels/fast/wgmma_pipeline.h"
#include "tools/tune/candidate.h"
#include "tools/tune/tune_case.h"

int main() {
  using gemm::Op;
  if (!tune::device_ready("tf32x3_tiles", true)) return 2;
  const bench::Shape narrow[] = {{256, 10, 1024, Op::N, Op::T}, {512, 10, 4096, Op::N, Op::T},
                                 {10, 1024, 256, Op::T, Op::N}, {10, 4096, 512, Op::T, Op::N},
                                 {256, 1024, 10, Op::N, Op::N}, {512, 4096, 10, Op::N, Op::N}};
  const bench::Shape weight_gradients[] = {
      {1024, 784, 256, Op::T, Op::N},  {1024, 1024, 256, Op::T, Op::N},
      {2048, 2048, 256, Op::T, Op::N}, {4096, 784, 512, Op::T, Op::N},
      {4096, 4096, 512, Op::T, Op::N}, {4096, 4096, 4096, Op::T, Op::N}};
  struct Entry {
    const char* name;
    tune::LaunchFn launch;
  };
  const std::vector<Entry> shipped = {{"fast", gemm::detail::launch_fast},
                                      {"x3_pipeline", gemm::detail::launch_tf32x3_pipeline},
                                      {"tf32x3_fast", gemm::detail::launch_tf32x3_fast}};
  // The pipelines alone, on K-major copies (k_major_copies.h) whatever the thresholds say, and as
  // the production variants choose.
  const std::vector<Entry> weight_gradient_entries = {
      {"x3_pipeline", gemm::detail::launch_tf32x3_pipeline},
      {"tf32x3_fast", gemm::detail::launch_tf32x3_fast},
      {"x3_pipeline+copies",
       [](const gemm::Problem& p, cudaStream_t s) {
         gemm::detail::launch_tn_on_k_major_copies(p, s, gemm::detail::launch_tf32x3_pipeline);
       }},
      {"pipeline", gemm::detail::launch_tf32_pipeline},
      {"tf32_fast", gemm::detail::launch_tf32_fast},
      {"pipeline+copies",
       [](const gemm::Problem& p, cudaStream_t s) {
         gemm::detail::launch_tn_on_k_major_copies(p, s, gemm::detail::launch_tf32_pipeline);
       }},
      {"register_a+copy", [](const gemm::Problem& p, cudaStream_t s) {
         gemm::detail::launch_tn_on_k_major_a(p, s, gemm::detail::launch_wgmma_register_a);
       }}};
  // NN: the TF32 pipeline against the register-A kernel, which tf32_fast runs where its grid fills
  // at least half the chip.
  const bench::Shape nn[] = {{256, 256, 256, Op::N, Op::N},    {512, 512, 512, Op::N, Op::N},
                             {256, 784, 1024, Op::N, Op::N},   {256, 1024, 1024, Op::N, Op::N},
                             {1024, 1024, 1024, Op::N, Op::N}, {512, 784, 4096, Op::N, Op::N},
                             {2048, 2048, 512, Op::N, Op::N},  {4096, 4096, 4096, Op::N, Op::N}};
  const std::vector<Entry> nn_entries = {{"pipeline", gemm::detail::launch_tf32_pipeline},
                                         {"register_a", gemm::detail::launch_wgmma_register_a},
                                         {"tf32_fast", gemm::detail::launch_tf32_fast}};
  std::vector<Entry> all = shipped;
  for (const tune::Candidate& cand : tune::candidates()) all.push_back({cand.name, cand.launch});
  try {
    bench::Timer timer(nullptr);
    auto sweep = [&](const bench::Shape& s, const std::vector<Entry>& entries) {
      tune::Case c(s, timer);
      const tune::Case::Baselines cublas = c.time_cublas();
      for (const Entry& e : entries) c.print_timed(e.name, e.launch, cublas);
    };
    for (const bench::Shape& s : narrow) sweep(s, all);
    for (const bench::Shape& s : weight_gradients) sweep(s, weight_gradient_entries);
    for (const bench::Shape& s : nn) sweep(s, nn_entries);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tf32x3_tiles: %s\n", e.what());
    return 1;
  }
  return 0;
}
