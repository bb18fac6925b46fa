// Candidate tiles of variant `fast` (kernels/fast/warptile.cuh's WarpTileConfig), for tune_tiles:
//   large: the tile unsplit, at any tile count (the large-tile question: which tile is fastest
//     where it fills the chip). Shipped (kernels/fast/fast.cu): ye as LargeTile.
//   small: the tile with K split as a tune::SplitPolicy says, as fast's small, narrow and fine
//     tiles are. Shipped: pa as SmallTile, sk as NarrowTile, pk as FineTile.
// tools/tune/CMakeLists.txt lists which to build, one translation unit each.
#pragma once

#include "kernels/fast/warptile.cuh"
#include "tools/tune/candidate.h"

namespace tune::fast_tiles {

using gemm::detail::KMajorTiles;
using gemm::detail::WarpTileConfig;

template <class Cfg, Kind K>
struct Candidate {
  using Config = Cfg;
  static constexpr Kind kKind = K;
};
template <class Cfg>
using Large = Candidate<Cfg, Kind::FastLarge>;
template <class Cfg>
using Small = Candidate<Cfg, Kind::FastSmall>;

// WarpTileConfig's arguments: BM, BN, BK, WM, WN, TM, TN, stages, how K-major tiles are read
// (KMajorTiles), and whether fragment reads are pipelined.
using wa = Large<WarpTileConfig<128, 128, 32, 64, 32, 8, 8, 2, KMajorTiles::Transpose>>;
using wb = Large<WarpTileConfig<128, 128, 32, 64, 32, 8, 8, 3, KMajorTiles::Transpose>>;
using wc = Large<WarpTileConfig<128, 128, 16, 64, 32, 8, 8, 2, KMajorTiles::Transpose>>;
using wd = Large<WarpTileConfig<128, 128, 16, 64, 32, 8, 8, 3, KMajorTiles::Transpose>>;
using wf = Large<WarpTileConfig<128, 128, 32, 32, 64, 8, 8, 2, KMajorTiles::Transpose>>;
using wh = Large<WarpTileConfig<128, 256, 32, 64, 64, 8, 16, 2, KMajorTiles::Transpose>>;
using xa = Large<WarpTileConfig<128, 128, 32, 64, 32, 8, 8, 2, KMajorTiles::ReadKMajor>>;
using xf = Large<WarpTileConfig<128, 128, 32, 32, 64, 8, 8, 2, KMajorTiles::ReadKMajor>>;
using ya = Large<WarpTileConfig<128, 128, 16, 32, 64, 8, 8, 3, KMajorTiles::TransposeAhead>>;
using yb = Large<WarpTileConfig<128, 128, 16, 32, 64, 8, 8, 4, KMajorTiles::TransposeAhead>>;
using yc = Large<WarpTileConfig<128, 128, 24, 32, 64, 8, 8, 3, KMajorTiles::TransposeAhead>>;
using yd = Large<WarpTileConfig<128, 128, 32, 32, 64, 8, 8, 3, KMajorTiles::TransposeAhead>>;
using ye = Large<WarpTileConfig<128, 128, 16, 64, 32, 8, 8, 4, KMajorTiles::TransposeAhead>>;
using yh = Large<WarpTileConfig<128, 256, 16, 64, 64, 8, 16, 3, KMajorTiles::TransposeAhead>>;
using yk = Large<WarpTileConfig<256, 128, 16, 64, 64, 16, 8, 3, KMajorTiles::TransposeAhead>>;
using yl = Large<WarpTileConfig<256, 128, 8, 64, 64, 16, 8, 4, KMajorTiles::TransposeAhead>>;
using ym = Large<WarpTileConfig<128, 256, 8, 64, 64, 8, 16, 4, KMajorTiles::TransposeAhead>>;
using sa = Small<WarpTileConfig<64, 64, 16, 32, 32, 8, 4, 3, KMajorTiles::ReadKMajor>>;
using sb = Small<WarpTileConfig<64, 64, 32, 32, 32, 8, 4, 3, KMajorTiles::ReadKMajor>>;
using sc = Small<WarpTileConfig<64, 64, 16, 32, 32, 4, 8, 3, KMajorTiles::ReadKMajor>>;
using sd = Small<WarpTileConfig<64, 64, 16, 32, 32, 8, 4, 2, KMajorTiles::ReadKMajor>>;
using se = Small<WarpTileConfig<64, 64, 32, 32, 32, 8, 4, 4, KMajorTiles::ReadKMajor>>;
using sf = Small<WarpTileConfig<64, 64, 16, 32, 16, 4, 4, 3, KMajorTiles::ReadKMajor>>;
using sg = Small<WarpTileConfig<64, 128, 16, 32, 64, 8, 8, 3, KMajorTiles::ReadKMajor>>;
using sh = Small<WarpTileConfig<128, 64, 16, 64, 32, 8, 8, 3, KMajorTiles::ReadKMajor>>;
using si = Small<WarpTileConfig<32, 64, 16, 32, 32, 8, 4, 3, KMajorTiles::ReadKMajor>>;
using sj = Small<WarpTileConfig<32, 64, 32, 16, 32, 4, 4, 3, KMajorTiles::ReadKMajor>>;
using sk = Small<WarpTileConfig<64, 32, 16, 32, 16, 4, 4, 3, KMajorTiles::ReadKMajor>>;
using sl = Small<WarpTileConfig<64, 64, 16, 32, 32, 8, 4, 4, KMajorTiles::ReadKMajor>>;
using sm = Small<WarpTileConfig<64, 64, 16, 32, 16, 4, 4, 4, KMajorTiles::ReadKMajor>>;
using so = Small<WarpTileConfig<64, 64, 8, 32, 32, 8, 4, 4, KMajorTiles::ReadKMajor>>;
using sp = Small<WarpTileConfig<64, 64, 8, 32, 32, 8, 4, 5, KMajorTiles::ReadKMajor>>;
using sq = Small<WarpTileConfig<64, 64, 8, 32, 16, 4, 4, 4, KMajorTiles::ReadKMajor>>;
using pa = Small<WarpTileConfig<64, 64, 16, 32, 32, 8, 4, 3, KMajorTiles::ReadKMajor, true>>;
using pb = Small<WarpTileConfig<64, 64, 32, 32, 32, 8, 4, 3, KMajorTiles::ReadKMajor, true>>;
using pf = Small<WarpTileConfig<64, 64, 16, 32, 16, 4, 4, 3, KMajorTiles::ReadKMajor, true>>;
using pk = Small<WarpTileConfig<64, 32, 16, 32, 16, 4, 4, 3, KMajorTiles::ReadKMajor, true>>;
using pl = Small<WarpTileConfig<64, 64, 16, 32, 32, 8, 4, 4, KMajorTiles::ReadKMajor, true>>;
using te = Small<WarpTileConfig<64, 64, 32, 32, 32, 8, 4, 4, KMajorTiles::Transpose>>;
using th = Small<WarpTileConfig<128, 64, 16, 64, 32, 8, 8, 3, KMajorTiles::Transpose>>;
using ua = Small<WarpTileConfig<64, 64, 32, 32, 32, 8, 4, 3, KMajorTiles::TransposeAhead>>;
using ub = Small<WarpTileConfig<64, 64, 16, 32, 32, 8, 4, 4, KMajorTiles::TransposeAhead>>;
using uc = Small<WarpTileConfig<128, 64, 16, 64, 32, 8, 8, 3, KMajorTiles::TransposeAhead>>;

template <class Cfg>
gemm::detail::SplitK plan_for(const gemm::Problem& p, const SplitPolicy& policy) {
  if (policy.forced_splits > 0) {
    const int k_tiles = (p.k + Cfg::kBk - 1) / Cfg::kBk;
    const int per_split = (k_tiles + policy.forced_splits - 1) / policy.forced_splits;
    return {(k_tiles + per_split - 1) / per_split, per_split * Cfg::kBk};
  }
  return gemm::detail::plan_split_k<Cfg::kBk>(
      p, gemm::detail::tile_count<Cfg::kBm, Cfg::kBn>(p), gemm::detail::multiprocessor_count(),
      policy.blocks_per_sm, policy.max_splits, policy.min_k_tiles);
}

template <class Cfg>
void launch_unsplit(const gemm::Problem& p, cudaStream_t stream) {
  gemm::detail::launch_warptile_config<Cfg, false>(p, gemm::detail::SplitK{1, p.k}, stream);
}

template <class Cfg>
int launch_split(const gemm::Problem& p, const SplitPolicy& policy, cudaStream_t stream) {
  const gemm::detail::SplitK plan = plan_for<Cfg>(p, policy);
  gemm::detail::launch_warptile_config<Cfg, true>(p, plan, stream);
  return plan.splits;
}

template <class C>
bool add(const char* name, int order) {
  using Cfg = typename C::Config;
  if constexpr (C::kKind == Kind::FastLarge)
    return add_candidate({name, C::kKind, order, launch_unsplit<Cfg>, nullptr});
  else
    return add_candidate({name, C::kKind, order, nullptr, launch_split<Cfg>});
}

}  // namespace tune::fast_tiles

// Registers candidate `name` (a tile above) at place `order`.
#define TUNE_CANDIDATE(name, order)    \
  static const bool tune_registered_ = \
      ::tune::fast_tiles::add<::tune::fast_tiles::name>(#name, order)
