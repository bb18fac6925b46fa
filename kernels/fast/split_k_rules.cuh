// The production variants' split-K rules, on top of the ladder's planner (plan_split_k and
// in_whole_waves, kernels/split_k.cuh): fast's finer tile in place of short slices (fast.cu), and
// the wgmma pipeline's coarser tile with its K split in place of the finer tile unsplit
// (wgmma_pipeline_kernel.cuh). Host logic; the ladder does not use it.
#pragma once

#include "kernels/split_k.cuh"

namespace gemm::detail {

// Whether a finer tile whose grid fills the chip unsplit (plan `fine`) should replace a coarser
// tile whose plan splits K into slices shorter than kShortKTiles K tiles of BK: the finer tile
// reuses each operand load less, but spares the slices' prologues and the reduction
// (docs/NOTES.md, "fast": small grids, the weight gradient).
template <int BK>
bool finer_tile_beats_split(const SplitK& coarse, const SplitK& fine) {
  return coarse.splits > 1 && coarse.k_per_split < kShortKTiles * BK && fine.splits == 1;
}

// A K tile of the wgmma pipeline's large tile (256×128) costs about 3/2 of the small tile's
// (128×128) for twice the output: 4096³ NT on the H200 ran at 351 TFLOP/s against 266
// (docs/results/tuning_wgmma_h200.txt). Summing a split tile's slices costs about 8 small K tiles:
// the cluster sum and store took 2.9 µs, a small K tile 0.43 µs at 512×4096×4096 NT
// (docs/results/phases.csv). In half small K tiles:
constexpr long kLargeKTileCost = 3, kSmallKTileCost = 2, kSplitSumCost = 16;

// A plan's cost for `tiles` output tiles of K-tile cost `k_tile_cost`: its waves on `sms`
// multiprocessors (one block each) times a slice's K tiles of BK, plus the sum where K is split.
template <int BK>
long pipeline_plan_cost(long tiles, const SplitK& plan, int sms, long k_tile_cost) {
  const long waves = (tiles * plan.splits + sms - 1) / sms;
  return waves * (plan.k_per_split / BK) * k_tile_cost + (plan.splits > 1 ? kSplitSumCost : 0);
}

// Whether the wgmma pipeline's large tile, with K split as `large` says over `large_tiles` tiles,
// should replace its small tile as `small` says over `small_tiles`: only with a split (unsplit,
// the large tile runs only where it fills the chip), and where it costs less. It does where the
// small tiles fill the chip unsplit and K is long (the wide model's 512×4096×4096 forward GEMM:
// 128 small tiles unsplit, or 64 large ones in two slices).
template <int BK>
bool large_tile_split_beats_small(long large_tiles, const SplitK& large, long small_tiles,
                                  const SplitK& small, int sms) {
  return large.splits > 1 && pipeline_plan_cost<BK>(large_tiles, large, sms, kLargeKTileCost) <
                                 pipeline_plan_cost<BK>(small_tiles, small, sms, kSmallKTileCost);
}

}  // namespace gemm::detail
