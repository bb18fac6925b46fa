// The production variant fast's split-K rule (fast.cu), on top of the ladder's planner
// (plan_split_k and in_whole_waves, kernels/split_k.cuh): a finer tile in place of short slices.
// Host logic; the ladder does not use it.
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

}  // namespace gemm::detail
