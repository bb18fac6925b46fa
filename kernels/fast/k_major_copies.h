// A TN GEMM run as NT on K-major copies of its operands, for the production tensor-core variants
// (tf32x3_fast.cu, tf32_fast.cu). Steps 9 and 11 land a K-major tile by TMA straight into the
// swizzled layout wgmma reads, but transpose an MN-major one in shared memory, stage by stage; TN
// has two. Where the GEMM does enough work per operand element, one transposing pass over A and B
// costs less than those transposes.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#pragma once

#include "kernels/gemm.h"

namespace gemm::detail {

// Whether p is TN and does at least min_flops_per_element flops (2·M·N·K) per element the copies
// write ((M + N)·K).
bool k_major_copies_pay(const Problem& p, double min_flops_per_element);

// Copies A (stored K×M) and B (stored K×N) as M×K and N×K matrices into the Transpose workspace of
// `stream`, then calls launch_nt on the same GEMM as NT over the copies (C, alpha, beta and the
// epilogue unchanged). p must be TN.
void launch_tn_on_k_major_copies(const Problem& p, cudaStream_t stream,
                                 void (*launch_nt)(const Problem&, cudaStream_t));

}  // namespace gemm::detail
