// Candidate tiles of variant `fast` (kernels/fast/warptile.cuh), for tune_tiles, each a tile
// config as warptile.cuh names them, and its kind:
//   FastLarge: the tile unsplit, at any tile count (the large-tile question: which tile is fastest
//     where it fills the chip). Shipped (kernels/fast/fast.cu): ye as LargeTile.
//   FastSmall: the tile with K split as a tune::SplitPolicy says, as fast's small, narrow and fine
//     tiles are. Shipped: pa as SmallTile, sk as NarrowTile, pk as FineTile.
// tools/tune/CMakeLists.txt lists which to build, one translation unit each.
#pragma once

#include "kernels/fast/warptile.cuh"
#include "tools/tune/candidate.h"

namespace tune::fast_tiles {

using gemm::detail::KMajorTiles;
using gemm::detail::WarpTileDefaults;

struct wa : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastLarge;
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32, kWarpM = 64, kWarpN = 32,
                       kThreadM = 8, kThreadN = 8, kStages = 2;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::Transpose;
};
struct wb : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastLarge;
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32, kWarpM = 64, kWarpN = 32,
                       kThreadM = 8, kThreadN = 8, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::Transpose;
};
struct wc : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastLarge;
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 16, kWarpM = 64, kWarpN = 32,
                       kThreadM = 8, kThreadN = 8, kStages = 2;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::Transpose;
};
struct wd : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastLarge;
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 16, kWarpM = 64, kWarpN = 32,
                       kThreadM = 8, kThreadN = 8, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::Transpose;
};
struct wf : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastLarge;
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32, kWarpM = 32, kWarpN = 64,
                       kThreadM = 8, kThreadN = 8, kStages = 2;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::Transpose;
};
struct wh : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastLarge;
  static constexpr int kBlockM = 128, kBlockN = 256, kBlockK = 32, kWarpM = 64, kWarpN = 64,
                       kThreadM = 8, kThreadN = 16, kStages = 2;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::Transpose;
};
struct xa : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastLarge;
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32, kWarpM = 64, kWarpN = 32,
                       kThreadM = 8, kThreadN = 8, kStages = 2;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
};
struct xf : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastLarge;
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32, kWarpM = 32, kWarpN = 64,
                       kThreadM = 8, kThreadN = 8, kStages = 2;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
};
struct ya : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastLarge;
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 16, kWarpM = 32, kWarpN = 64,
                       kThreadM = 8, kThreadN = 8, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::TransposeAhead;
};
struct yb : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastLarge;
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 16, kWarpM = 32, kWarpN = 64,
                       kThreadM = 8, kThreadN = 8, kStages = 4;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::TransposeAhead;
};
struct yc : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastLarge;
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 24, kWarpM = 32, kWarpN = 64,
                       kThreadM = 8, kThreadN = 8, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::TransposeAhead;
};
struct yd : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastLarge;
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32, kWarpM = 32, kWarpN = 64,
                       kThreadM = 8, kThreadN = 8, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::TransposeAhead;
};
struct ye : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastLarge;
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 16, kWarpM = 64, kWarpN = 32,
                       kThreadM = 8, kThreadN = 8, kStages = 4;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::TransposeAhead;
};
struct yh : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastLarge;
  static constexpr int kBlockM = 128, kBlockN = 256, kBlockK = 16, kWarpM = 64, kWarpN = 64,
                       kThreadM = 8, kThreadN = 16, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::TransposeAhead;
};
struct yk : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastLarge;
  static constexpr int kBlockM = 256, kBlockN = 128, kBlockK = 16, kWarpM = 64, kWarpN = 64,
                       kThreadM = 16, kThreadN = 8, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::TransposeAhead;
};
struct yl : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastLarge;
  static constexpr int kBlockM = 256, kBlockN = 128, kBlockK = 8, kWarpM = 64, kWarpN = 64,
                       kThreadM = 16, kThreadN = 8, kStages = 4;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::TransposeAhead;
};
struct ym : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastLarge;
  static constexpr int kBlockM = 128, kBlockN = 256, kBlockK = 8, kWarpM = 64, kWarpN = 64,
                       kThreadM = 8, kThreadN = 16, kStages = 4;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::TransposeAhead;
};
struct sa : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 16, kWarpM = 32, kWarpN = 32,
                       kThreadM = 8, kThreadN = 4, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
};
struct sb : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 32, kWarpM = 32, kWarpN = 32,
                       kThreadM = 8, kThreadN = 4, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
};
struct sc : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 16, kWarpM = 32, kWarpN = 32,
                       kThreadM = 4, kThreadN = 8, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
};
struct sd : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 16, kWarpM = 32, kWarpN = 32,
                       kThreadM = 8, kThreadN = 4, kStages = 2;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
};
struct se : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 32, kWarpM = 32, kWarpN = 32,
                       kThreadM = 8, kThreadN = 4, kStages = 4;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
};
struct sf : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 16, kWarpM = 32, kWarpN = 16,
                       kThreadM = 4, kThreadN = 4, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
};
struct sg : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 128, kBlockK = 16, kWarpM = 32, kWarpN = 64,
                       kThreadM = 8, kThreadN = 8, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
};
struct sh : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 128, kBlockN = 64, kBlockK = 16, kWarpM = 64, kWarpN = 32,
                       kThreadM = 8, kThreadN = 8, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
};
struct si : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 32, kBlockN = 64, kBlockK = 16, kWarpM = 32, kWarpN = 32,
                       kThreadM = 8, kThreadN = 4, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
};
struct sj : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 32, kBlockN = 64, kBlockK = 32, kWarpM = 16, kWarpN = 32,
                       kThreadM = 4, kThreadN = 4, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
};
struct sk : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 32, kBlockK = 16, kWarpM = 32, kWarpN = 16,
                       kThreadM = 4, kThreadN = 4, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
};
struct sl : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 16, kWarpM = 32, kWarpN = 32,
                       kThreadM = 8, kThreadN = 4, kStages = 4;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
};
struct sm : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 16, kWarpM = 32, kWarpN = 16,
                       kThreadM = 4, kThreadN = 4, kStages = 4;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
};
struct so : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 8, kWarpM = 32, kWarpN = 32,
                       kThreadM = 8, kThreadN = 4, kStages = 4;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
};
struct sp : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 8, kWarpM = 32, kWarpN = 32,
                       kThreadM = 8, kThreadN = 4, kStages = 5;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
};
struct sq : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 8, kWarpM = 32, kWarpN = 16,
                       kThreadM = 4, kThreadN = 4, kStages = 4;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
};
struct pa : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 16, kWarpM = 32, kWarpN = 32,
                       kThreadM = 8, kThreadN = 4, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
  static constexpr bool kPipelineFragments = true;
};
struct pb : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 32, kWarpM = 32, kWarpN = 32,
                       kThreadM = 8, kThreadN = 4, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
  static constexpr bool kPipelineFragments = true;
};
struct pf : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 16, kWarpM = 32, kWarpN = 16,
                       kThreadM = 4, kThreadN = 4, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
  static constexpr bool kPipelineFragments = true;
};
struct pk : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 32, kBlockK = 16, kWarpM = 32, kWarpN = 16,
                       kThreadM = 4, kThreadN = 4, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
  static constexpr bool kPipelineFragments = true;
};
struct pl : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 16, kWarpM = 32, kWarpN = 32,
                       kThreadM = 8, kThreadN = 4, kStages = 4;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::ReadKMajor;
  static constexpr bool kPipelineFragments = true;
};
struct te : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 32, kWarpM = 32, kWarpN = 32,
                       kThreadM = 8, kThreadN = 4, kStages = 4;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::Transpose;
};
struct th : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 128, kBlockN = 64, kBlockK = 16, kWarpM = 64, kWarpN = 32,
                       kThreadM = 8, kThreadN = 8, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::Transpose;
};
struct ua : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 32, kWarpM = 32, kWarpN = 32,
                       kThreadM = 8, kThreadN = 4, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::TransposeAhead;
};
struct ub : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 16, kWarpM = 32, kWarpN = 32,
                       kThreadM = 8, kThreadN = 4, kStages = 4;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::TransposeAhead;
};
struct uc : WarpTileDefaults {
  static constexpr Kind kKind = Kind::FastSmall;
  static constexpr int kBlockM = 128, kBlockN = 64, kBlockK = 16, kWarpM = 64, kWarpN = 32,
                       kThreadM = 8, kThreadN = 8, kStages = 3;
  static constexpr KMajorTiles kKMajorTiles = KMajorTiles::TransposeAhead;
};

template <class Cfg>
gemm::detail::SplitK plan_for(const gemm::Problem& p, const SplitPolicy& policy) {
  if (policy.forced_splits > 0) {
    const int k_tiles = (p.k + Cfg::kBlockK - 1) / Cfg::kBlockK;
    const int per_split = (k_tiles + policy.forced_splits - 1) / policy.forced_splits;
    return {(k_tiles + per_split - 1) / per_split, per_split * Cfg::kBlockK};
  }
  return gemm::detail::plan_split_k<Cfg::kBlockK>(
      p, gemm::detail::tile_count<Cfg::kBlockM, Cfg::kBlockN>(p),
      gemm::detail::multiprocessor_count(),
      {.blocks_per_sm = policy.blocks_per_sm,
       .max_splits = policy.max_splits,
       .min_k_tiles = policy.min_k_tiles});
}

template <class Cfg>
void launch_unsplit(const gemm::Problem& p, cudaStream_t stream) {
  gemm::detail::launch_warptile_config<Cfg>(p, gemm::detail::SplitK{1, p.k}, stream);
}

template <class Cfg>
int launch_split(const gemm::Problem& p, const SplitPolicy& policy, cudaStream_t stream) {
  const gemm::detail::SplitK plan = plan_for<Cfg>(p, policy);
  gemm::detail::launch_warptile_config<Cfg>(p, plan, stream);
  return plan.splits;
}

template <class Cfg>
bool add(const char* name, int order) {
  if constexpr (Cfg::kKind == Kind::FastLarge)
    return add_candidate({name, Cfg::kKind, order, launch_unsplit<Cfg>, nullptr});
  else
    return add_candidate({name, Cfg::kKind, order, nullptr, launch_split<Cfg>});
}

}  // namespace tune::fast_tiles

// Registers candidate `name` (a tile above) at place `order`.
#define TUNE_CANDIDATE(name, order)    \
  static const bool tune_registered_ = \
      ::tune::fast_tiles::add<::tune::fast_tiles::name>(#name, order)
