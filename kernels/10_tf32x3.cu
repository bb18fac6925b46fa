// Step 10 — fp32 accuracy from TF32 tensor cores ("3×TF32", as CUTLASS names it). Each fp32 value
// x is split into a TF32 high part and a TF32 remainder, x = hi + lo with hi = tf32(x) and
// lo = tf32(x − hi), so a·b = hi_a·hi_b + hi_a·lo_b + lo_a·hi_b + lo_a·lo_b. Three mma.sync per
// fragment pair take the first three terms, smallest first; the dropped lo_a·lo_b and the
// rounding of lo are about 2⁻²² relative to a·b, below fp32's own rounding of the sum, so the
// result passes the fp32 tolerance where step 7's one product (≈2⁻¹¹) does not.
// Change from 07: the arithmetic only (SplitTf32, split_tf32.cuh, shared with tf32x3_fast). The
// split is done once per value loaded from shared memory, in registers, so the tiles, the pipeline
// and split-K are 07's (mma_sync.cuh); each K step costs three instructions instead of one. Inputs
// must be finite: an infinite x gives lo = ∞ − ∞ = NaN.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#include "kernels/launchers.h"
#include "kernels/split_tf32.cuh"

namespace gemm::detail {
namespace {

using LargeTile = MmaConfig<128, 128, 32, 64, 32, 3>;  // 8 warps, 64×32 each
using SmallTile = MmaConfig<64, 64, 32, 32, 32, 3>;    // 4 warps, 32×32 each

}  // namespace

void launch_tf32x3(const Problem& p, cudaStream_t stream) {
  launch_mma_sync_tiles<LargeTile, SmallTile, SplitTf32>(p, stream);
}

}  // namespace gemm::detail
