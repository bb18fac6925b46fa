// A TN GEMM run on K-major copies of its operands, for the production tensor-core variants
// (tf32x3_fast.cu, tf32_fast.cu). The wgmma pipeline (wgmma_pipeline.cuh) lands a K-major tile by
// TMA straight into the swizzled layout wgmma reads, but transposes an MN-major one in shared
// memory, stage by stage; TN has two. Where the GEMM does enough work per operand element, one
// transposing pass costs less than those transposes: over A and B, then NT; or over A alone, then
// NN on tf32_fast's register-A kernel, which reads MN-major B as it is (wgmma_register_a.cu).
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#pragma once

#include "kernels/gemm.h"

namespace gemm::detail {

// TN takes the copies from this many flops (2·M·N·K) per element they write ((M + N)·K), i.e.
// where M·N ≥ 600·(M + N). Measured on the H200 (scripts/tuning/tune.sh tf32x3) with the wgmma
// pipeline in TF32 and 3×TF32 alike: the copies lose at 1024 × 1024 × 256 (1024 flops per
// element), win at 4096 × 784 × 512 (1316) and at every larger GEMM.
constexpr double kCopiesMinFlopsPerElement = 1200;

// Whether p is TN and does at least kCopiesMinFlopsPerElement flops per element the copies write.
bool k_major_copies_pay(const Problem& p);

// Copies A (stored K×M) and B (stored K×N) as M×K and N×K matrices into the Transpose workspace of
// `stream`, then calls launch_nt on the same GEMM as NT over the copies (C, alpha, beta and the
// epilogue unchanged). p must be TN.
void launch_tn_on_k_major_copies(const Problem& p, cudaStream_t stream,
                                 void (*launch_nt)(const Problem&, cudaStream_t));

// Copies A alone as an M×K matrix into the Transpose workspace, then calls launch_nn on the same
// GEMM as NN over the copy and B as it is. p must be TN.
void launch_tn_on_k_major_a(const Problem& p, cudaStream_t stream,
                            void (*launch_nn)(const Problem&, cudaStream_t));

}  // namespace gemm::detail
