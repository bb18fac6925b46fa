// GemmProduction.*: a path of the production tensor-core variants that the correctness suite's
// shapes are too small to reach: TN GEMMs that tf32_fast and tf32x3_fast run as NT on K-major
// copies of A and B (kernels/fast/k_major_copies.h; from M·N ≥ 600·(M + N)). K leaves
// the copies' rows padded; the second case has misaligned operands and leading dimensions. Each
// is checked against the double reference in the variant's own tolerance.
// Also, without a GPU: the copies' threshold and layout check.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "expect_error.h"
#include "gemm_harness.h"
#include "gpu_test.h"
#include "kernels/fast/k_major_copies.h"
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

gemm::Problem problem(gemm::Op op_a, gemm::Op op_b, int m, int n, int k) {
  gemm::Problem p{};
  p.op_a = op_a, p.op_b = op_b, p.m = m, p.n = n, p.k = k;
  return p;
}

// The threshold KERNELS.md gives its measurements for: M·N ≥ 600·(M + N), TN only.
TEST(GemmProduction, KMajorCopiesPayFromTwelveHundredFlopsPerElementInTnOnly) {
  using gemm::Op;
  using gemm::detail::k_major_copies_pay;
  EXPECT_FALSE(k_major_copies_pay(problem(Op::T, Op::N, 1024, 1024, 256)));  // 1024 per element
  EXPECT_FALSE(k_major_copies_pay(problem(Op::T, Op::N, 1024, 784, 256)));
  EXPECT_TRUE(k_major_copies_pay(problem(Op::T, Op::N, 4096, 784, 512)));  // 1316 per element
  EXPECT_TRUE(k_major_copies_pay(problem(Op::T, Op::N, 4096, 4096, 512)));
  EXPECT_TRUE(k_major_copies_pay(problem(Op::T, Op::N, 1200, 1200, 1)));  // exactly 1200
  EXPECT_FALSE(k_major_copies_pay(problem(Op::T, Op::N, 1199, 1199, 1)));
  for (Op a : {Op::N, Op::T})
    for (Op b : {Op::N, Op::T})
      if (a != Op::T || b != Op::N)
        EXPECT_FALSE(k_major_copies_pay(problem(a, b, 4096, 4096, 512))) << gemm::layout_name(a, b);
}

TEST(GemmProduction, KMajorCopiesRefuseALayoutOtherThanTn) {
  const gemm::Problem nt = problem(gemm::Op::N, gemm::Op::T, 4096, 4096, 512);
  EXPECT_THROW_WITH(gemm::detail::launch_tn_on_k_major_copies(nt, nullptr, nullptr), gemm::Error,
                    "TN only");
}

}  // namespace
}  // namespace gemm_test
