// Variant `tf32x3_fast`: the production fp32-accurate tensor-core kernel, beside the ladder. It
// runs 3×TF32 (steps 10 and 11) with the kernel and the tile that suit the shape:
//   narrow outputs (at most 16 rows or columns) and short K (at most 32): step 10's mma.sync
//     kernel on the small tiles of fast/mma_sync_tiles.cuh (launch_narrow_or_short_k); so do
//     TN and NN on few tiles with K up to 512 (launch_small_mn_major_b).
//   on Hopper, NN with aligned operands on a grid that gives half the multiprocessors a block:
//     tf32_fast's register-A kernel in 3×TF32 (wgmma_register_a.cu), which reads B's fragments
//     into registers, where the pipeline's producer would transpose B's tile at every stage.
//   on Hopper, the rest: step 11's 3×TF32 on the production warp-specialised pipeline
//     (wgmma_pipeline.cuh). Where both operands are MN-major (TN, the weight gradients) and the
//     GEMM does enough work per element to transpose (k_major_copies_pay), A is first copied
//     K-major into a workspace and the GEMM runs as NN on the register-A kernel, or, where that
//     does not serve, both are copied and it runs as NT, TMA straight into the tiles
//     (k_major_copies.h): the pipeline transposes each MN-major tile in shared memory, which
//     costs TN two transposes per K tile (docs/NOTES.md, "tf32x3_fast").
//   elsewhere: step 10's kernel with its own tiles.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#include "kernels/fast/mma_sync_tiles.cuh"
#include "kernels/fast/wgmma_pipeline.h"
#include "kernels/launchers.h"

namespace gemm::detail {

// C (M×N) = op(A) (M×K) · op(B) (K×N) to fp32 accuracy, on the kernel and tile for the shape.
void launch_tf32x3_fast(const Problem& p, cudaStream_t stream) {
  if (launch_narrow_or_short_k<mma_ops::Tf32x3>(p, stream) ||
      launch_small_mn_major_b<mma_ops::Tf32x3>(p, stream))
    return;
  if (wgmma_unavailable()) {
    launch_tf32x3(p, stream);
    return;
  }
  launch_on_wgmma_kernels(p, stream, launch_wgmma_register_a_tf32x3, launch_tf32x3_pipeline);
}

}  // namespace gemm::detail
