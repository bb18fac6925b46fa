// Variant `tf32_fast`: the production TF32 kernel, beside the ladder; a TF32 variant, so it runs
// only when named. On Hopper it is step 9 (wgmma_ws), except that a TN GEMM (the weight
// gradients) doing at least kCopiesMinFlopsPerElement flops per element of its operands runs as NT
// on K-major copies of them (k_major_copies.h), as tf32x3_fast's does: step 9's producer would
// transpose both tiles of every stage. The threshold is three times tf32x3_fast's, since the
// copies take as long while the TF32 GEMM takes about a third of the time. Elsewhere, step 7.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#include "kernels/fast/k_major_copies.h"
#include "kernels/launchers.h"

namespace gemm::detail {
namespace {

// 2·M·N·K / ((M + N)·K) ≥ 3600, i.e. M·N ≥ 1800·(M + N): from 3600 × 3600 up.
constexpr double kCopiesMinFlopsPerElement = 3600;

}  // namespace

void launch_tf32_fast(const Problem& p, cudaStream_t stream) {
  if (wgmma_unavailable()) {
    launch_tf32_mma(p, stream);
  } else if (k_major_copies_pay(p, kCopiesMinFlopsPerElement)) {
    launch_tn_on_k_major_copies(p, stream, launch_wgmma_ws);
  } else {
    launch_wgmma_ws(p, stream);
  }
}

}  // namespace gemm::detail
