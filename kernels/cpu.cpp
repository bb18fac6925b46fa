// The host path through OpenBLAS, used where there is no GPU. cblas_sgemm takes the row-major
// contract as it is; the epilogue is a second pass over C.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N, all host memory.
#include <cblas.h>

#include <algorithm>

#include "kernels/launchers.h"

namespace gemm::detail {

void launch_cpu(const Problem& p, cudaStream_t /*stream*/) {
  // The contract says C is not read when beta = 0; clear it so NaN garbage cannot leak through
  // a BLAS that multiplies instead of overwriting.
  if (p.beta == 0.0f)
    for (int i = 0; i < p.m; ++i) std::fill_n(p.c + static_cast<long>(i) * p.ldc, p.n, 0.0f);
  const auto trans = [](Op op) { return op == Op::N ? CblasNoTrans : CblasTrans; };
  cblas_sgemm(CblasRowMajor, trans(p.op_a), trans(p.op_b), p.m, p.n, p.k, p.alpha, p.a, p.lda, p.b,
              p.ldb, p.beta, p.c, p.ldc);
  if (p.epilogue == EpilogueOp::None) return;
  for (int i = 0; i < p.m; ++i) {
    float* row = p.c + static_cast<long>(i) * p.ldc;
    for (int j = 0; j < p.n; ++j) {
      switch (p.epilogue) {
        case EpilogueOp::Bias:
          row[j] += p.bias[j];
          break;
        case EpilogueOp::BiasRelu:
          row[j] = std::max(row[j] + p.bias[j], 0.0f);
          break;
        case EpilogueOp::ReluMask:
          if (!(p.mask[static_cast<long>(i) * p.ldmask + j] > 0.0f)) row[j] = 0.0f;
          break;
        default:
          break;
      }
    }
  }
}

}  // namespace gemm::detail
