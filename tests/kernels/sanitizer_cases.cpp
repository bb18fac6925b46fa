// gemm_sanitizer_cases: one device variant on a small fixed set of cases that reach its kernels'
// paths, every layout and every epilogue, each checked against the oracle. Made to run under
// compute-sanitizer (scripts/check/sanitize.sh runs it once per variant and tool):
//
//   gemm_sanitizer_cases --list             the device variants, one a line
//   gemm_sanitizer_cases VARIANT            runs them; prints "VARIANT: N cases"; exit 1 on a
//                                           wrong result or an error, 2 on bad arguments
//
// The shapes are small and odd (no dimension a tile multiple), so that every edge path runs:
//   1×1×1, 37×45×29, 131×67×300 and 67×260×1031 (split K), each NN/NT/TN/TT × none, bias,
//   bias_relu, relu_mask (alpha 1.5; beta 0.5 on half of them);
//   37×45×29 with every operand misaligned and padded leading dimensions (the non-TMA paths);
//   1500×1400×100 (grids of more tiles than multiprocessors: the large-tile paths, over 4 K
//   tiles, so that the stages and the 3×TF32 remainders' ring are reused);
//   300×3000×2000 NT (the wgmma pipeline's large tile with K split in a cluster; the split NT
//   shapes above take its narrow tile).
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "gemm_harness.h"

namespace {

using gemm::EpilogueOp;
using gemm::Op;

std::vector<gemm_test::Case> sanitizer_cases() {
  const Op ops[2] = {Op::N, Op::T};
  const EpilogueOp epilogues[4] = {EpilogueOp::None, EpilogueOp::Bias, EpilogueOp::BiasRelu,
                                   EpilogueOp::ReluMask};
  struct Shape {
    int m, n, k;
  };
  const Shape small[] = {{1, 1, 1}, {37, 45, 29}, {131, 67, 300}, {67, 260, 1031}};
  std::vector<gemm_test::Case> cases;
  std::uint64_t seed = 1;
  for (Op op_a : ops)
    for (Op op_b : ops) {
      for (const Shape& s : small)
        for (EpilogueOp e : epilogues) {
          gemm_test::Case c;
          c.op_a = op_a, c.op_b = op_b, c.m = s.m, c.n = s.n, c.k = s.k;
          c.alpha = 1.5f, c.beta = cases.size() % 2 ? 0.5f : 0.0f;
          c.epilogue = e, c.seed = seed++;
          cases.push_back(gemm_test::finished(c));
        }
      gemm_test::Case misaligned;
      misaligned.op_a = op_a, misaligned.op_b = op_b, misaligned.m = 37, misaligned.n = 45;
      misaligned.k = 29, misaligned.off_a = 1, misaligned.off_b = 3, misaligned.off_c = 1;
      misaligned.lda = (op_a == Op::N ? 29 : 37) + 3,
      misaligned.ldb = (op_b == Op::N ? 45 : 29) + 5;
      misaligned.ldc = 45 + 2, misaligned.epilogue = EpilogueOp::ReluMask, misaligned.ldmask = 47;
      misaligned.off_bias = 1, misaligned.off_mask = 2, misaligned.seed = seed++;
      cases.push_back(gemm_test::finished(misaligned));
      gemm_test::Case large;
      large.op_a = op_a, large.op_b = op_b, large.m = 1500, large.n = 1400, large.k = 100;
      large.epilogue = EpilogueOp::Bias, large.seed = seed++;
      cases.push_back(gemm_test::finished(large));
    }
  gemm_test::Case long_k;
  long_k.op_a = Op::N, long_k.op_b = Op::T, long_k.m = 300, long_k.n = 3000, long_k.k = 2000;
  long_k.epilogue = EpilogueOp::BiasRelu, long_k.seed = seed++;
  cases.push_back(gemm_test::finished(long_k));
  return cases;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gemm_sanitizer_cases --list | VARIANT\n");
    return 2;
  }
  if (std::strcmp(argv[1], "--list") == 0) {
    for (const gemm::Variant& v : gemm::variants())
      if (v.device == gemm::Device::CUDA) std::printf("%s\n", v.name);
    return 0;
  }
  try {
    const gemm::Variant& variant = gemm::find_variant(argv[1]);
    if (variant.device != gemm::Device::CUDA) {
      std::fprintf(stderr, "gemm_sanitizer_cases: %s is not a device variant\n", variant.name);
      return 2;
    }
    if (const char* why = gemm::unavailable_reason(variant)) {
      std::fprintf(stderr, "gemm_sanitizer_cases: %s cannot run here: %s\n", variant.name, why);
      return 1;
    }
    const gemm_test::Batch batch(sanitizer_cases());
    const std::vector<std::string> failures = gemm_test::run_and_check(variant, batch);
    for (const std::string& f : failures) std::fprintf(stderr, "FAIL %s\n", f.c_str());
    std::printf("%s: %zu cases, %zu failed\n", variant.name, batch.cases().size(), failures.size());
    return failures.empty() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemm_sanitizer_cases: %s\n", e.what());
    return 1;
  }
}
