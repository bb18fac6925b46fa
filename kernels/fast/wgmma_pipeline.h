// The production warp-specialised wgmma kernel's launchers (wgmma_pipeline.cuh has the kernel,
// wgmma_pipeline_tiles.cuh the tiles), for tf32_fast and tf32x3_fast. sm_90a code: they throw where
// wgmma_unavailable() says why. Any layout and alignment.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#pragma once

#include "kernels/gemm.h"

namespace gemm::detail {

// One TF32 product (wgmma_ops::Tf32x1): a 256×128 tile where it gives every multiprocessor a
// block, else 128×128 with K split (the tiles step 9 ships).
void launch_tf32_pipeline(const Problem& p, cudaStream_t stream);
// Three TF32 products, fp32-accurate (wgmma_ops::Tf32x3): 128×128 (step 11's tile) in 4 stages,
// the remainders in a ring of two parts, K split on small grids.
void launch_tf32x3_pipeline(const Problem& p, cudaStream_t stream);

// The same tiles (tf32_fast's 128×128, tf32x3_fast's) run persistently: min(blocks, tiles) blocks,
// each taking output tiles b, b + blocks, … with its barriers' phases carried from one tile to the
// next. K unsplit; any layout and alignment.
void launch_tf32_pipeline_persistent(const Problem& p, int blocks, cudaStream_t stream);
void launch_tf32x3_pipeline_persistent(const Problem& p, int blocks, cudaStream_t stream);

// How tf32_fast and tf32x3_fast run a GEMM on Hopper's wgmma kernels, given their arithmetic's
// register-A kernel and pipeline: a TN GEMM large enough for K-major copies to pay
// (k_major_copies_pay) runs as NN on a copy of A and the register-A kernel where B is aligned and
// the grid gives half the multiprocessors a block, else as NT on copies of A and B and the
// pipeline, which alone would transpose both tiles; NN runs on the register-A kernel where it
// serves and fills half the chip; the rest on the pipeline.
using WgmmaLauncher = void (*)(const Problem&, cudaStream_t);
void launch_on_wgmma_kernels(const Problem& p, cudaStream_t stream, WgmmaLauncher register_a,
                             WgmmaLauncher pipeline);

}  // namespace gemm::detail
