// Variant `tf32x3_fast`: the production fp32-accurate tensor-core kernel, beside the ladder. It
// runs 3×TF32 (steps 10 and 11) with the kernel and the tile that suit the shape:
//   narrow: an output at most 16 rows or 16 columns (the MLP's output layer, N = 10, and its
//     weight gradient, M = 10): step 10's mma.sync kernel (as fast/mma_sync_tiles.cuh builds it)
//     with a 16-wide tile, K split across blocks. wgmma's tiles are at least 64 rows; step 11's
//     128×128 tile would be 92% padding.
//   short K: K at most one K tile (32; the output layer's input gradient, K = 10): step 10's
//     kernel with its output staged in shared memory and stored a row at a time, since these
//     blocks do little but store; a 64×128 tile where that gives every multiprocessor a block,
//     else 16×64. On the large grids, K ≤ 16 runs on `fast` (fp32 on CUDA cores) instead.
//   on Hopper, the rest: step 11's 3×TF32 on the production warp-specialised pipeline
//     (wgmma_pipeline.cuh). Where both operands are MN-major (TN, the weight gradients) and the
//     GEMM does enough work per element to transpose (k_major_copies_pay), both are first copied
//     K-major into a workspace and the GEMM runs as NT, TMA straight into the tiles
//     (k_major_copies.h): the pipeline transposes each MN-major tile in shared memory, which
//     costs TN two transposes per K tile (docs/NOTES.md, "tf32x3_fast").
//   elsewhere: step 10's kernel with its own tiles.
// The configs came from scripts/tuning/tf32x3_tiles.sh (docs/results/tuning_tf32x3_h200.txt).
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#include "kernels/fast/k_major_copies.h"
#include "kernels/fast/mma_sync_tiles.cuh"
#include "kernels/fast/wgmma_pipeline.h"
#include "kernels/launchers.h"

namespace gemm::detail {
namespace {

// 4 warps of 16×16 each.
struct NarrowNTile : MmaTileDefaults {
  static constexpr int kBlockM = 64, kBlockN = 16, kBlockK = 32, kWarpM = 16, kWarpN = 16,
                       kStages = 3;
};
// 4 warps of 16×16 each.
struct NarrowMTile : MmaTileDefaults {
  static constexpr int kBlockM = 16, kBlockN = 64, kBlockK = 32, kWarpM = 16, kWarpN = 16,
                       kStages = 3;
};
// 4 warps of 32×64 each, the output staged.
struct ShortKLargeTile {
  static constexpr int kBlockM = 64, kBlockN = 128, kBlockK = 32, kWarpM = 32, kWarpN = 64,
                       kStages = 2;
  static constexpr bool kStagedOutput = true;
};
// 4 warps of 16×16 each, the output staged.
struct ShortKSmallTile {
  static constexpr int kBlockM = 16, kBlockN = 64, kBlockK = 32, kWarpM = 16, kWarpN = 16,
                       kStages = 2;
  static constexpr bool kStagedOutput = true;
};

// An output narrower than this in M or N takes a narrow tile; K up to this takes the short-K one.
// On a grid that fills the chip, K up to one K tile of `fast` (16) takes `fast`: such a GEMM does
// 2K flops per element of C, so storing C is nearly all of its cost, and fp32 FMAs on CUDA cores
// store it sooner than the split's staged tile (docs/NOTES.md, "tf32x3_fast").
constexpr int kNarrow = 16;
constexpr int kShortK = ShortKLargeTile::kBlockK, kFastK = 16;
static_assert(NarrowNTile::kBlockN == kNarrow && NarrowMTile::kBlockM == kNarrow,
              "a narrow tile is exactly as wide as the outputs it serves");

}  // namespace

// C (M×N) = op(A) (M×K) · op(B) (K×N) to fp32 accuracy, on the kernel and tile for the shape.
void launch_tf32x3_fast(const Problem& p, cudaStream_t stream) {
  if (p.n <= kNarrow) {
    launch_split_tile<NarrowNTile>(p, stream);
  } else if (p.m <= kNarrow) {
    launch_split_tile<NarrowMTile>(p, stream);
  } else if (p.k <= kShortK) {
    if (tile_count<ShortKLargeTile::kBlockM, ShortKLargeTile::kBlockN>(p) < multiprocessor_count())
      launch_split_tile<ShortKSmallTile>(p, stream);
    else if (p.k <= kFastK)
      launch_fast(p, stream);
    else
      launch_split_tile<ShortKLargeTile>(p, stream);
  } else if (wgmma_unavailable()) {
    launch_tf32x3(p, stream);
  } else if (k_major_copies_pay(p)) {
    launch_tn_on_k_major_copies(p, stream, launch_tf32x3_pipeline);
  } else {
    launch_tf32x3_pipeline(p, stream);
  }
}

}  // namespace gemm::detail
