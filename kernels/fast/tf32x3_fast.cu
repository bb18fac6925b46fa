// Variant `tf32x3_fast`: the production fp32-accurate tensor-core kernel, beside the ladder. It
// runs 3×TF32 (steps 10 and 11) with the kernel and the tile that suit the shape:
//   narrow: an output at most 16 rows or 16 columns (the MLP's output layer, N = 10, and its
//     weight gradient, M = 10): step 10's mma.sync kernel with a 16-wide tile, K split across
//     blocks. wgmma's tiles are at least 64 rows; step 11's 128×128 tile would be 92% padding.
//   short K: K at most one K tile (32; the output layer's input gradient, K = 10): step 10's
//     kernel with its output staged in shared memory and stored a row at a time, since these
//     blocks do little but store; a 64×128 tile where that gives every multiprocessor a block,
//     else 16×64. On the large grids, K ≤ 16 runs on `fast` (fp32 on CUDA cores) instead.
//   on Hopper, the rest: step 11's 3×TF32 on the production warp-specialised pipeline
//     (wgmma_pipeline.cuh). Where both operands are MN-major (TN, the weight gradients) and the
//     GEMM does enough work per element to transpose (k_major_copies_pay), both are first copied
//     K-major into a workspace and the GEMM runs as NT, TMA straight into the tiles
//     (k_major_copies.h): the pipeline transposes each MN-major tile in shared memory, which
//     costs TN two transposes per K tile (docs/KERNELS.md, "tf32x3_fast").
//   elsewhere: step 10's kernel with its own tiles.
// The configs came from scripts/tune/tf32x3_tiles.sh (docs/results/tuning_tf32x3_h200.txt).
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#include "kernels/fast/k_major_copies.h"
#include "kernels/fast/wgmma_pipeline.h"
#include "kernels/launchers.h"
#include "kernels/split_tf32.cuh"

namespace gemm::detail {
namespace {

using NarrowNTile = MmaConfig<64, 16, 32, 16, 16, 3>;             // 4 warps, 16×16 each
using NarrowMTile = MmaConfig<16, 64, 32, 16, 16, 3>;             // 4 warps, 16×16 each
using ShortKLargeTile = MmaConfig<64, 128, 32, 32, 64, 2, true>;  // 4 warps, 32×64 each
using ShortKSmallTile = MmaConfig<16, 64, 32, 16, 16, 2, true>;   // 4 warps, 16×16 each

// An output narrower than this in M or N takes a narrow tile; K up to this takes the short-K one.
// On a grid that fills the chip, K up to one K tile of `fast` (16) takes `fast`: such a GEMM does
// 2K flops per element of C, so storing C is nearly all of its cost, and fp32 FMAs on CUDA cores
// store it sooner than the split's staged tile (docs/KERNELS.md, "tf32x3_fast").
constexpr int kNarrow = 16;
constexpr int kShortK = ShortKLargeTile::kBk, kFastK = 16;
static_assert(NarrowNTile::kBn == kNarrow && NarrowMTile::kBm == kNarrow,
              "a narrow tile is exactly as wide as the outputs it serves");

// A step-10 tile with K split across blocks until the grid gives BlocksPerSm blocks per
// multiprocessor, in slices of at least kMinKTiles K tiles: these tiles are small and their
// blocks short, so several share a multiprocessor. scripts/tune/ times other configs through it.
constexpr int kBlocksPerSm = 4, kMinKTiles = 2, kMaxSplits = 16;
template <class Cfg, int BlocksPerSm = kBlocksPerSm>
void launch_split_tile(const Problem& p, cudaStream_t stream) {
  const SplitK plan =
      plan_split_k<Cfg::kBk>(p, tile_count<Cfg::kBm, Cfg::kBn>(p), multiprocessor_count(),
                             BlocksPerSm, kMaxSplits, kMinKTiles);
  launch_mma_sync_config<Cfg, SplitTf32>(p, plan, stream);
}

}  // namespace

// In the library only: a tune candidate (scripts/tune/) including this file must not define it
// again.
#ifndef GEMM_TUNE_CANDIDATE
void launch_tf32x3_fast(const Problem& p, cudaStream_t stream) {
  if (p.n <= kNarrow) {
    launch_split_tile<NarrowNTile>(p, stream);
  } else if (p.m <= kNarrow) {
    launch_split_tile<NarrowMTile>(p, stream);
  } else if (p.k <= kShortK) {
    if (tile_count<ShortKLargeTile::kBm, ShortKLargeTile::kBn>(p) < multiprocessor_count())
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
#endif

}  // namespace gemm::detail
