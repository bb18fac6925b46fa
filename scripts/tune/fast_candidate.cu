// A candidate tile config of variant `fast` (kernels/fast/warptile.cuh): TUNE_CFG is the
// WarpTileConfig's arguments (BM, BN, BK, WM, WN, TM, TN, stages, KMajorTiles::…, and optionally
// whether fragment reads are pipelined). See candidate.h for the other macros.
//   default      Kind::FastLarge: the tile unsplit, at any tile count (the large-tile question:
//                which tile is fastest where it fills the chip).
//   TUNE_SMALL   Kind::FastSmall: the tile with K split as a SplitPolicy says, as fast's small,
//                narrow and fine tiles are.
#include "kernels/fast/warptile.cuh"
#include "scripts/tune/candidate.h"

namespace gemm::detail {
namespace {

using Cfg = WarpTileConfig<TUNE_CFG>;

#ifdef TUNE_SMALL
SplitK plan_for(const Problem& p, const tune::SplitPolicy& policy) {
  if (policy.forced_splits > 0) {
    const int k_tiles = (p.k + Cfg::kBk - 1) / Cfg::kBk;
    const int per_split = (k_tiles + policy.forced_splits - 1) / policy.forced_splits;
    return {(k_tiles + per_split - 1) / per_split, per_split * Cfg::kBk};
  }
  return plan_split_k<Cfg::kBk>(p, tile_count<Cfg::kBm, Cfg::kBn>(p), multiprocessor_count(),
                                policy.blocks_per_sm, policy.max_splits, policy.min_k_tiles);
}

int launch_split(const Problem& p, const tune::SplitPolicy& policy, cudaStream_t stream) {
  const SplitK plan = plan_for(p, policy);
  launch_warptile_config<Cfg, true>(p, plan, stream);
  return plan.splits;
}

TUNE_REGISTER(tune::Kind::FastSmall, nullptr, launch_split);
#else
void launch(const Problem& p, cudaStream_t stream) {
  launch_warptile_config<Cfg, false>(p, SplitK{1, p.k}, stream);
}

TUNE_REGISTER(tune::Kind::FastLarge, launch, nullptr);
#endif

}  // namespace
}  // namespace gemm::detail
