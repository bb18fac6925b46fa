// The production variants' split-K rules, on top of the ladder's planner (plan_split_k and
// in_whole_waves, kernels/split_k.cuh): fast's finer tile in place of short slices (fast.cu), and
// the wgmma pipeline's choice among its tiles, each with K split as planned
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

// What the wgmma pipeline's tiles cost, in quarter small K tiles (a 128×128×32 product: 0.43 µs
// at 512×4096×4096 NT, docs/results/phases.csv). A K tile of the large tile (256×128) costs about
// 3/2 of the small tile's for twice the output: 4096³ NT ran at 351 TFLOP/s against 266
// (docs/results/tuning_wgmma_h200.txt). The narrow tile's (64×128, one consumer warpgroup) is
// the tile's own (wgmma_pipeline_tiles.cuh). Summing a split tile's slices: the cluster sum and
// store of a 128×128 tile took 2.9 µs, about 7 small K tiles; here a fixed 4 and 4 per 128×128 of
// output (every block reads its share of each slice's partial), an estimate.
struct PipelineTileCost {
  long k_tile;     // one K tile of the output tile
  long split_sum;  // the sum of its K slices, where K is split
};
constexpr PipelineTileCost kLargeTileCost{6, 48}, kSmallTileCost{4, 32};
constexpr long kNarrowSplitSumCost = 24;

// A plan's cost for `tiles` output tiles: its waves on `sms` multiprocessors (one block each)
// times a slice's K tiles of BK, plus the sum where K is split.
template <int BK>
long pipeline_plan_cost(long tiles, const SplitK& plan, int sms, const PipelineTileCost& cost) {
  const long waves = (tiles * plan.splits + sms - 1) / sms;
  return waves * (plan.k_per_split / BK) * cost.k_tile + (plan.splits > 1 ? cost.split_sum : 0);
}

// Whether the wgmma pipeline's large tile, with K split as `large` says over `large_tiles` tiles,
// should replace its small tile as `small` says over `small_tiles`: only with a split (unsplit,
// the large tile runs only where it fills the chip), and where it costs less. It does where the
// small tiles fill the chip unsplit and K is long (the wide model's 512×4096×4096 forward GEMM:
// 128 small tiles unsplit, or 64 large ones in two slices).
template <int BK>
bool large_tile_split_beats_small(long large_tiles, const SplitK& large, long small_tiles,
                                  const SplitK& small, int sms) {
  return large.splits > 1 && pipeline_plan_cost<BK>(large_tiles, large, sms, kLargeTileCost) <
                                 pipeline_plan_cost<BK>(small_tiles, small, sms, kSmallTileCost);
}

// Whether the narrow tile, with K split as `narrow` says over `narrow_tiles` tiles, should replace
// the small tile as `small` says over `small_tiles`: only where the small tile splits K (there
// twice the tiles take more slices or shorter ones, and each block sums half the share), and where
// it costs less: the M = 128–512 forward GEMMs of the models. The caller offers it only where both
// operands are K-major: the producer transposes an MN-major operand's tile every K tile whatever
// the tile's rows, which on the narrow tile is twice the transposing per product.
// narrow_k_tile_cost: a narrow K tile's cost, in quarter small K tiles.
template <int BK>
bool narrow_tile_beats_small(long narrow_tiles, const SplitK& narrow, long narrow_k_tile_cost,
                             long small_tiles, const SplitK& small, int sms) {
  const PipelineTileCost narrow_cost{narrow_k_tile_cost, kNarrowSplitSumCost};
  return small.splits > 1 && pipeline_plan_cost<BK>(narrow_tiles, narrow, sms, narrow_cost) <
                                 pipeline_plan_cost<BK>(small_tiles, small, sms, kSmallTileCost);
}

}  // namespace gemm::detail
