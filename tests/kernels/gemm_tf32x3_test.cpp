// GemmTf32x3.*: on the same operands spread over 24 octaves, a TF32 variant (each operand rounded
// or truncated to TF32, one product) misses the fp32 tolerance and its 3×TF32 counterpart (each
// split into two TF32 parts, three products) meets it, in every layout: tf32 against tf32x3
// (mma.sync), and wgmma_ws against tf32x3_ws (Hopper's wgmma). Each prints its worst error
// ratio against the fp32 bound. tf32x3_fast meets it too, on shapes that take each of its paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

#include "gemm_harness.h"
#include "gpu_test.h"
#include "kernels/gemm.h"

namespace gemm_test {
namespace {

using Shapes = std::vector<std::tuple<int, int, int>>;

// 4 layouts × the shapes (M, N, K), operands with magnitudes 2^-12 … 2^12.
Batch wide_range_batch(const Shapes& shapes = {{128, 128, 256}, {256, 1024, 784}}) {
  std::vector<Case> cases;
  std::uint64_t seed = 1;
  for (gemm::Op a : {gemm::Op::N, gemm::Op::T})
    for (gemm::Op b : {gemm::Op::N, gemm::Op::T})
      for (const auto& [m, n, k] : shapes) {
        Case c;
        c.op_a = a, c.op_b = b, c.m = m, c.n = n, c.k = k;
        c.wide_range = true;
        c.seed = seed++;
        cases.push_back(finished(c));
      }
  return Batch(cases);
}

// How variant `name` fares on `batch` against the fp32 bound.
struct Outcome {
  int outside = 0;           // cases with an element outside the bound (or an error)
  double worst_ratio = 0.0;  // the largest |c − ref| / bound over all cases
  std::string first;         // the first failing case's description
};

Outcome against_fp32_bound(const char* name, const Batch& batch) {
  std::vector<std::string> errors;
  const std::vector<float> out = run_batch(gemm::find_variant(name), batch, errors);
  Outcome o;
  for (std::size_t i = 0; i < batch.cases().size(); ++i) {
    double ratio = 0.0;
    const std::string why =
        errors[i].empty()
            ? check_case(batch, i, out.data(), gemm::tolerance(gemm::Precision::FP32), &ratio)
            : errors[i];
    o.worst_ratio = std::max(o.worst_ratio, ratio);
    if (!why.empty() && o.outside++ == 0) o.first = why;
  }
  std::cout << name << ": worst error ratio against the fp32 bound " << o.worst_ratio << ", "
            << o.outside << " of " << batch.cases().size() << " cases outside\n";
  return o;
}

void expect_split_meets_what_tf32_misses(const char* tf32, const char* split) {
  const Batch batch = wide_range_batch();
  const Outcome plain = against_fp32_bound(tf32, batch);
  const Outcome accurate = against_fp32_bound(split, batch);
  EXPECT_EQ(plain.outside, int(batch.cases().size()))
      << tf32 << " met the fp32 bound on some wide-range cases";
  EXPECT_EQ(accurate.outside, 0) << accurate.first;
}

TEST(GemmTf32x3, WideRangeMissesTheFp32BoundWithTf32AndMeetsItWithTf32x3) {
  VARIANT_TEST_OR_SKIP(gemm::find_variant("tf32x3"));
  expect_split_meets_what_tf32_misses("tf32", "tf32x3");
}

TEST(GemmTf32x3, WideRangeMissesTheFp32BoundWithWgmmaWsAndMeetsItWithTf32x3Ws) {
  VARIANT_TEST_OR_SKIP(gemm::find_variant("tf32x3_ws"));
  expect_split_meets_what_tf32_misses("wgmma_ws", "tf32x3_ws");
}

// Its narrow tiles (N or M ≤ 16), its short-K tiles (K ≤ 32; on the large grid `fast` where
// K ≤ 16), the pipeline (NT), and the register-A kernel (1300² NN, and TN on A's K-major copy:
// M·N ≥ 600·(M + N)).
TEST(GemmTf32x3, WideRangeMeetsTheFp32BoundOnEveryPathOfTf32x3Fast) {
  VARIANT_TEST_OR_SKIP(gemm::find_variant("tf32x3_fast"));
  const Batch batch = wide_range_batch({{256, 10, 1024},
                                        {10, 1024, 256},
                                        {256, 1024, 10},
                                        {512, 4096, 10},
                                        {512, 4096, 20},
                                        {256, 1024, 784},
                                        {1300, 1300, 77}});
  const Outcome fast = against_fp32_bound("tf32x3_fast", batch);
  EXPECT_EQ(fast.outside, 0) << fast.first;
}

}  // namespace
}  // namespace gemm_test
