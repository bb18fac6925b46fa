// GemmTf32x3.*: on the same operands spread over 24 octaves, tf32 (each operand rounded to TF32,
// one product) misses the fp32 tolerance and tf32x3 (each split into two TF32 parts, three
// products) meets it, in every layout.
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <tuple>
#include <vector>

#include "gemm_harness.h"
#include "gpu_test.h"
#include "kernels/gemm.h"

namespace gemm_test {
namespace {

// How many cases of `batch` variant `name` gets outside the fp32 bound, and the first such
// case's description.
int cases_outside_fp32_bound(const char* name, const Batch& batch, std::string& first) {
  std::vector<std::string> errors;
  const std::vector<float> out = run_batch(gemm::find_variant(name), batch, errors);
  int outside = 0;
  for (std::size_t i = 0; i < batch.cases().size(); ++i) {
    const std::string why =
        errors[i].empty() ? check_case(batch, i, out.data(), gemm::tolerance(gemm::Precision::FP32))
                          : errors[i];
    if (!why.empty() && outside++ == 0) first = why;
  }
  return outside;
}

TEST(GemmTf32x3, WideRangeMissesTheFp32BoundWithTf32AndMeetsItWithTf32x3) {
  VARIANT_TEST_OR_SKIP(gemm::find_variant("tf32x3"));
  std::vector<Case> cases;
  std::uint64_t seed = 1;
  for (gemm::Op a : {gemm::Op::N, gemm::Op::T})
    for (gemm::Op b : {gemm::Op::N, gemm::Op::T})
      for (const auto& [m, n, k] : {std::tuple{128, 128, 256}, std::tuple{256, 1024, 784}}) {
        Case c;
        c.op_a = a, c.op_b = b, c.m = m, c.n = n, c.k = k;
        c.wide_range = true;
        c.seed = seed++;
        cases.push_back(finished(c));
      }
  const Batch batch(cases);
  std::string tf32_first, tf32x3_first;
  const int tf32_outside = cases_outside_fp32_bound("tf32", batch, tf32_first);
  const int tf32x3_outside = cases_outside_fp32_bound("tf32x3", batch, tf32x3_first);
  EXPECT_EQ(tf32_outside, int(cases.size())) << "tf32 met the fp32 bound on some wide-range cases";
  EXPECT_EQ(tf32x3_outside, 0) << tf32x3_first;
  std::cout << "tf32, first case outside the fp32 bound: " << tf32_first << "\n";
}

}  // namespace
}  // namespace gemm_test
