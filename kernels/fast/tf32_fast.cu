// Variant `tf32_fast`: the production TF32 kernel, beside the ladder; a TF32 variant, so it runs
// only when named. On Hopper: an NN GEMM with aligned operands, on a grid that gives half the
// multiprocessors a block, runs on the register-A kernel (wgmma_register_a.cu), which reads B's
// fragments into registers where the warp-specialised pipeline's producer would transpose B's
// tile at every stage. A TN GEMM (the weight gradients) large enough for the copies to pay
// (k_major_copies.h) runs as NN on a K-major copy of A and that kernel, or, with B misaligned, as
// NT on copies of A and B and the pipeline, which alone would transpose both tiles. The rest runs
// on the pipeline (wgmma_pipeline.cuh: step 9's idea with a slot ring, cluster split-K and a
// misaligned path). Narrow outputs (at most 16 rows or columns) and short K (at most 32), which
// wgmma's 64-row tiles serve badly, run on step 7's mma.sync kernel with the small tiles of
// fast/mma_sync_tiles.cuh, as in tf32x3_fast; so do TN and NN on few tiles with K up to 512
// (launch_small_mn_major_b). Elsewhere, step 7.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#include "kernels/fast/mma_sync_tiles.cuh"
#include "kernels/fast/wgmma_pipeline.h"
#include "kernels/launchers.h"

namespace gemm::detail {

void launch_tf32_fast(const Problem& p, cudaStream_t stream) {
  if (launch_narrow_or_short_k<mma_ops::Tf32x1>(p, stream) ||
      launch_small_mn_major_b<mma_ops::Tf32x1>(p, stream))
    return;
  if (wgmma_unavailable()) {
    launch_tf32_mma(p, stream);
    return;
  }
  launch_on_wgmma_kernels(p, stream, launch_wgmma_register_a, launch_tf32_pipeline);
}

}  // namespace gemm::detail
