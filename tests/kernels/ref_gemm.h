// The test oracle: a deliberately simple double-precision GEMM, separate from the `cpu` variant
// (which is OpenBLAS). It reads op(A) and op(B) element by element as gemm.h describes them, then
// forms plain dot products in double. Besides each dot product it returns Σ_k |a_ik·b_kj|, the
// scale of the rounding error any summation order can make, which the tolerance is relative to.
//
//   op_a = N: A is M×K, lda ≥ K        op_a = T: A is K×M, lda ≥ M
//   op_b = N: B is K×N, ldb ≥ N        op_b = T: B is N×K, ldb ≥ K
//   dot and abs_sum are dense M×N (row stride N).
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "kernels/gemm.h"

namespace gemm_test {

// op(A)[i][kk], straight from the contract.
inline float op_a_at(gemm::Op op, const float* a, int lda, int i, int kk) {
  return op == gemm::Op::N ? a[std::size_t(i) * lda + kk] : a[std::size_t(kk) * lda + i];
}
// op(B)[kk][j], straight from the contract.
inline float op_b_at(gemm::Op op, const float* b, int ldb, int kk, int j) {
  return op == gemm::Op::N ? b[std::size_t(kk) * ldb + j] : b[std::size_t(j) * ldb + kk];
}

// dot[i·N + j] = Σ_k op(A)[i][k]·op(B)[k][j] and abs_sum[i·N + j] = Σ_k |op(A)[i][k]·op(B)[k][j]|,
// both accumulated in double. alpha, beta and C are applied by the caller.
inline void ref_gemm(gemm::Op op_a, gemm::Op op_b, int m, int n, int k, const float* a, int lda,
                     const float* b, int ldb, std::vector<double>& dot,
                     std::vector<double>& abs_sum) {
  // Step 1: op(A) as a dense M×K matrix and op(B)ᵀ as a dense N×K matrix, so that step 2 walks
  // both along K contiguously (this only keeps the oracle fast at 1025³; it changes no value).
  std::vector<double> ra(std::size_t(m) * k), rb(std::size_t(n) * k);
  for (int i = 0; i < m; ++i)
    for (int kk = 0; kk < k; ++kk) ra[std::size_t(i) * k + kk] = op_a_at(op_a, a, lda, i, kk);
  for (int j = 0; j < n; ++j)
    for (int kk = 0; kk < k; ++kk) rb[std::size_t(j) * k + kk] = op_b_at(op_b, b, ldb, kk, j);

  // Step 2: plain dot products.
  dot.assign(std::size_t(m) * n, 0.0);
  abs_sum.assign(std::size_t(m) * n, 0.0);
  for (int i = 0; i < m; ++i) {
    const double* ai = &ra[std::size_t(i) * k];
    for (int j = 0; j < n; ++j) {
      const double* bj = &rb[std::size_t(j) * k];
      double s = 0.0, t = 0.0;
      for (int kk = 0; kk < k; ++kk) {
        const double prod = ai[kk] * bj[kk];  // exact: a product of two floats fits a double
        s += prod;
        t += std::fabs(prod);
      }
      dot[std::size_t(i) * n + j] = s;
      abs_sum[std::size_t(i) * n + j] = t;
    }
  }
}

}  // namespace gemm_test
