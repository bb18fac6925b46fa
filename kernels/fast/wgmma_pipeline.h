// The production warp-specialised wgmma kernel's launchers (wgmma_pipeline.cuh has the kernel,
// wgmma_pipeline.cu the tiles), for tf32_fast and tf32x3_fast. sm_90a code: they throw where
// wgmma_unavailable() says why. Any layout and alignment.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#pragma once

#include "kernels/gemm.h"

namespace gemm::detail {

// One TF32 product (wgmma_ops::Tf32x1): a 256×128 tile where it gives every multiprocessor a
// block, else 128×128 with K split (the tiles step 9 ships).
void launch_tf32_pipeline(const Problem& p, cudaStream_t stream);
// Three TF32 products, fp32-accurate (wgmma_ops::Tf32x3): 128×128 in 3 stages, K split on small
// grids (the tile step 11 ships).
void launch_tf32x3_pipeline(const Problem& p, cudaStream_t stream);

}  // namespace gemm::detail
