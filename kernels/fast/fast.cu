// Variant `fast`: the production fp32 kernel, beside the ladder. It runs step 6's tiling
// (warptile.cuh) with the tile configuration that suits the shape: a large tile when the grid fills
// the chip, else a small tile with K split across blocks, a narrow one for outputs at most 32
// wide, or a fine one in place of short K slices. docs/NOTES.md, "fast", has the measurements.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#include "kernels/fast/split_k_rules.cuh"
#include "kernels/fast/warptile.cuh"
#include "kernels/launchers.h"

namespace gemm::detail {
namespace {

// The fastest on the H200 of the shapes scripts/tuning/tune.sh fast sweeps (docs/NOTES.md,
// docs/results/tuning_h200.txt). Large: 4 stages of BK = 16, warp tiles of 64×32, K-major
// tiles transposed one K tile ahead. Small: 3 stages of BK = 16 (2 buffers where the fragment
// reads are pipelined), the K-major reads, K split for 3 blocks per multiprocessor in at most 16
// slices (fewer where they fit whole waves of resident blocks: in_whole_waves), summed through the
// workspace as step 6 sums them (warptile.cuh says why not in a cluster). Narrow: for an output at
// most 32 wide (the MLP's output layer, N = 10), where a 64-wide tile would compute mostly columns
// that are not there. Fine: the same tile with its fragment reads pipelined, in place of short
// slices of the small tile (finer_tile_beats_split); at N = 10 the pipelining loses (the sweep's pk
// against sk).
struct LargeTile : WarpTileDefaults {
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 16, kWarpM = 64, kWarpN = 32,
                       kThreadM = 8, kThreadN = 8, kStages = 4;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::TransposeAhead;
};
struct SmallTile {
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 16, kWarpM = 32, kWarpN = 32,
                       kThreadM = 8, kThreadN = 4, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
  static constexpr bool kPipelineFragments = true;
};
struct NarrowTile : WarpTileDefaults {
  static constexpr int kBlockM = 64, kBlockN = 32, kBlockK = 16, kWarpM = 32, kWarpN = 16,
                       kThreadM = 4, kThreadN = 4, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
};
struct FineTile : NarrowTile {
  static constexpr bool kPipelineFragments = true;
};

// The tile's plan: K split across blocks until the grid gives 3 blocks per multiprocessor, in at
// most 16 slices; fewer where those would leave a short last wave of resident blocks.
template <class Cfg>
SplitK split_plan(const Problem& p, int sms) {
  const long tiles = tile_count<Cfg::kBlockM, Cfg::kBlockN>(p);
  const SplitK plan =
      plan_split_k<Cfg::kBlockK>(p, tiles, sms, {.blocks_per_sm = 3, .max_splits = 16});
  return in_whole_waves<Cfg::kBlockK>(p, plan, tiles, long(warptile_resident_blocks<Cfg>(p)) * sms);
}

}  // namespace

// The large block tile when it gives every multiprocessor a block. Otherwise the small one, K
// split across blocks until the grid fills the chip; the narrow one for an output at most its
// width wide; or the fine one where it fills the chip unsplit and the small tile's slices would
// be short.
void launch_fast(const Problem& p, cudaStream_t stream) {
  const int sms = multiprocessor_count();
  const long large_tiles = tile_count<LargeTile::kBlockM, LargeTile::kBlockN>(p);
  if (large_tiles >= sms) {
    launch_warptile_config<LargeTile>(p, SplitK{1, p.k}, stream);
    return;
  }
  if (p.n <= NarrowTile::kBlockN) {
    launch_warptile_config<NarrowTile>(p, split_plan<NarrowTile>(p, sms), stream);
    return;
  }
  static_assert(SmallTile::kBlockK == FineTile::kBlockK, "both plans count K tiles of one size");
  const SplitK small = split_plan<SmallTile>(p, sms), fine = split_plan<FineTile>(p, sms);
  if (finer_tile_beats_split<SmallTile::kBlockK>(small, fine)) {
    launch_warptile_config<FineTile>(p, fine, stream);
  } else {
    launch_warptile_config<SmallTile>(p, small, stream);
  }
}

}  // namespace gemm::detail
