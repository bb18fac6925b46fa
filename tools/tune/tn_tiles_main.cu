// tune_tn_tiles: times mma.sync split tiles (tn_candidates.h) at weight-gradient shapes (TN, K =
// the batch) of the standard and the odd models, beside what tf32_fast and tf32x3_fast run there
// and step 7; then at their input-gradient shapes (NN, B MN-major: the next candidate rule). Run by
// scripts/tuning/tune.sh tn. Each beside cuBLAS fp32 and TF32 through gemm_bench's timing harness,
// with its largest difference from cuBLAS fp32 (a sanity check; the test suite is the correctness
// proof; TF32 differs by about 1e-2).
#include <cstdio>
#include <vector>

#include "kernels/launchers.h"
#include "tools/tune/candidate.h"
#include "tools/tune/tune_case.h"

int main() {
  using gemm::Op;
  if (!tune::device_ready("tn_tiles", true)) return 2;
  // {M, N, K}: the out × in weight gradient of a layer at batch K.
  const int weight_gradients[][3] = {{1024, 784, 256}, {1024, 1024, 256}, {512, 784, 128},
                                     {512, 512, 128},  {777, 784, 200},   {333, 777, 200},
                                     {1500, 784, 96},  {257, 784, 64},    {2000, 2000, 384},
                                     {4096, 784, 512}, {4096, 4096, 512}};
  // {M, N, K}: the batch × in input gradient of a layer of `in` inputs and K outputs.
  const int input_gradients[][3] = {{128, 512, 512},   {256, 1024, 1024}, {256, 784, 1024},
                                    {200, 777, 333},   {96, 1500, 100},   {160, 640, 480},
                                    {384, 2000, 2000}, {512, 4096, 4096}};
  struct Entry {
    const char* name;
    tune::LaunchFn launch;
  };
  std::vector<Entry> all = {{"tf32", gemm::detail::launch_tf32_mma},
                            {"tf32_fast", gemm::detail::launch_tf32_fast},
                            {"tf32x3_fast", gemm::detail::launch_tf32x3_fast}};
  for (const tune::Candidate& cand : tune::candidates()) all.push_back({cand.name, cand.launch});
  try {
    bench::Timer timer(nullptr);
    const auto sweep = [&](const int(&s)[3], Op op_a) {
      tune::Case c(bench::Shape{s[0], s[1], s[2], op_a, Op::N}, timer);
      const tune::Case::Baselines cublas = c.time_cublas();
      for (const Entry& e : all) c.print_timed(e.name, e.launch, cublas);
    };
    for (const auto& s : weight_gradients) sweep(s, Op::T);
    for (const auto& s : input_gradients) sweep(s, Op::N);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tn_tiles: %s\n", e.what());
    return 1;
  }
  return 0;
}
