// A GEMM with K of at most 16 (the output layer's input gradient, K = 10) on CUDA cores, for
// tf32x3_fast. Such a GEMM does 2K flops per element of C it writes, so storing C is nearly all of
// its cost, and fp32 FMAs are exact enough and cheap enough: 3×TF32's splitting buys nothing.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#pragma once

#include "kernels/gemm.h"

namespace gemm::detail {

constexpr int kShortKFmaMaxK = 16;

// A block of 256 threads computes 4·RowsPerThread rows × 256 columns of C: each thread a float4
// of columns in RowsPerThread rows, so that a warp stores 512 contiguous bytes of a row at a
// time. RowsPerThread is 2, 4 or 8. Throws gemm::Error for K > kShortKFmaMaxK.
template <int RowsPerThread>
void launch_short_k_fma_rows(const Problem& p, cudaStream_t stream);

// The most rows per thread that still gives every multiprocessor two blocks, else 2.
void launch_short_k_fma(const Problem& p, cudaStream_t stream);

}  // namespace gemm::detail
