// GemmProduction.*: a path of the production tensor-core variants that the correctness suite's
// shapes are too small to reach: TN GEMMs that tf32_fast and tf32x3_fast run as NT on K-major
// copies of A and B (kernels/fast/k_major_copies.h; from M·N ≥ 600·(M + N)). K leaves
// the copies' rows padded; the second case has misaligned operands and leading dimensions. Each
// is checked against the double reference in the variant's own tolerance.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gemm_harness.h"
#include "gpu_test.h"
#include "kernels/gemm.h"

namespace gemm_test {
namespace {

void expect_tn_on_copies_correct(const char* name) {
  const gemm::Variant& variant = gemm::find_variant(name);
  VARIANT_TEST_OR_SKIP(variant);
  Case aligned;
  aligned.op_a = gemm::Op::T, aligned.op_b = gemm::Op::N;
  aligned.m = 3601, aligned.n = 3605, aligned.k = 37;
  aligned.seed = 1;
  Case misaligned = aligned;
  misaligned.m = 3650, misaligned.n = 3700, misaligned.k = 64;
  misaligned.lda = 3651, misaligned.ldb = 3703, misaligned.off_a = 1, misaligned.off_b = 3;
  misaligned.seed = 2;
  const Batch batch({finished(aligned), finished(misaligned)});
  const std::vector<std::string> failures = run_and_check(variant, batch);
  EXPECT_TRUE(failures.empty()) << failures.front();
}

TEST(GemmProduction, Tf32FastRunsLargeTnOnKMajorCopies) {
  expect_tn_on_copies_correct("tf32_fast");
}

TEST(GemmProduction, Tf32x3FastRunsLargeTnOnKMajorCopies) {
  expect_tn_on_copies_correct("tf32x3_fast");
}

}  // namespace
}  // namespace gemm_test
