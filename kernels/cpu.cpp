// The host path through OpenBLAS, used where there is no GPU. cblas_sgemm takes the row-major
// contract as it is; the epilogue is a second pass over C.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N, all host memory.
#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "base/memory_limit.h"
#include "kernels/launchers.h"

namespace gemm {

void reserve_host_scratch() {
  static std::atomic<bool> reserved{false};
  if (reserved) return;
  const gemm_mlp::MemoryLimit left = gemm_mlp::address_space_left();
  if (left.bytes == gemm_mlp::MemoryLimit{}.bytes) return;  // no limit
  // 128 MiB and a page, as gdb shows Debian's OpenBLAS 0.3.21 map it; a MiB of slack.
  gemm_mlp::check_allocation(std::uint64_t{129} << 20, left,
                             "OpenBLAS's GEMM buffer, which its first GEMM maps,");
  // Large enough for OpenBLAS's buffered path: small products skip the buffer.
  constexpr int n = 256;
  std::vector<float> a(std::size_t(n) * n, 0.0f), c(std::size_t(n) * n);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, a.data(), n,
              0.0f, c.data(), n);
  reserved = true;
}

}  // namespace gemm

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
