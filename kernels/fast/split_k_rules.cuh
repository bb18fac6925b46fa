// The production variant fast's split-K rules (fast.cu), on top of the ladder's planner
// (plan_split_k, kernels/split_k.cuh): fewer slices where they fill whole waves of resident
// blocks, and a finer tile in place of short slices. Host logic; the ladder uses neither.
#pragma once

#include "kernels/split_k.cuh"

namespace gemm::detail {

// For kernels with several resident blocks per multiprocessor (fast): the plan, or fewer slices
// where they finish sooner. Blocks run in waves of `resident` (every multiprocessor's resident
// blocks at once), each as long as its slice, so a plan takes about its waves times its slice; a
// few blocks past the last whole wave run as a wave of their own, a whole slice long (fast at
// 384×2000×2000 NT: 192 tiles in 3 slices on 528 resident, 121 µs; in 2, 110 µs; docs/NOTES.md,
// "fast"). Ties keep the plan; `resident` < 1 (unknown) keeps it too.
template <int BK>
SplitK in_whole_waves(const Problem& p, SplitK plan, long tiles, long resident) {
  if (plan.splits == 1 || resident < 1) return plan;
  const int k_tiles = (p.k + BK - 1) / BK;
  auto cost = [&](int splits, int slice_k_tiles) {
    return (tiles * splits + resident - 1) / resident * slice_k_tiles;
  };
  SplitK best = plan;
  for (int splits = plan.splits - 1; splits >= 1; --splits) {
    const SplitK fewer = k_in_slices<BK>(k_tiles, splits);
    if (cost(fewer.splits, fewer.k_per_split / BK) < cost(best.splits, best.k_per_split / BK))
      best = fewer;
  }
  return best;
}

// Whether a finer tile whose grid fills the chip unsplit (plan `fine`) should replace a coarser
// tile whose plan splits K into slices shorter than kShortKTiles K tiles of BK: the finer tile
// reuses each operand load less, but spares the slices' prologues and the reduction
// (docs/NOTES.md, "fast": small grids, the weight gradient).
template <int BK>
bool finer_tile_beats_split(const SplitK& coarse, const SplitK& fine) {
  return coarse.splits > 1 && coarse.k_per_split < kShortKTiles * BK && fine.splits == 1;
}

}  // namespace gemm::detail
