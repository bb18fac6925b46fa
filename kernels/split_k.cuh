// Split-K, shared by the kernels that adapt to small problems (steps 4–11 and fast/). When M×N has
// too few output tiles to give every multiprocessor a block (the MLP's M = 256 shapes), blockIdx.z
// splits K, and the slices' partial products are summed in a fixed order, so results are
// deterministic (no atomics) and beta·C is applied once. Here the workspace way: each slice of
// blocks writes its partial product to global memory and a second kernel sums them (run_split_k;
// every GPU). Production kernels also sum in a thread block cluster's shared memory
// (fast/cluster_split_k.cuh).
#pragma once

#include <algorithm>
#include <utility>

#include "kernels/common.cuh"

namespace gemm::detail {

struct SplitK {
  int splits = 1;       // gridDim.z
  int k_per_split = 0;  // a multiple of the K tile
};

// A K slice shorter than this many K tiles spends a large share of its time in its pipeline's
// prologue and the reduction (plan_split_k here, finer_tile_beats_split in fast/split_k_rules.cuh).
constexpr int kShortKTiles = 16;

// K's k_tiles tiles of BK in at most `splits` slices of equal whole tiles; recounted, since
// rounding the slice length up can leave the last slices empty.
template <int BK>
SplitK k_in_slices(int k_tiles, int splits) {
  const int tiles_per_split = (k_tiles + splits - 1) / splits;
  return {(k_tiles + tiles_per_split - 1) / tiles_per_split, tiles_per_split * BK};
}

// How plan_split_k slices K, by name: a caller writes only the fields it changes, e.g.
//   plan_split_k<kBk>(p, tiles, sms, {.blocks_per_sm = 4})
//   plan_split_k<kPanelK>(p, tiles, sms, {.one_wave = true})
struct SplitKOptions {
  int blocks_per_sm = 1;  // the blocks wanted on each multiprocessor, all slices counted
  int max_splits = 16;    // at most this many slices
  int min_k_tiles = 4;    // a slice at least this many K tiles long
  // Never more than blocks_per_sm · sms blocks (tiles·splits rounded down, not up), for kernels
  // of one block per multiprocessor, where the blocks beyond would run as a second, mostly idle
  // wave.
  bool one_wave = false;
};

// With fewer tiles than blocks_per_sm blocks per multiprocessor: enough slices for tiles·splits
// to reach that many, at most max_splits, each at least min_k_tiles K tiles long (a shorter slice
// spends more on its pipeline prologue and the reduction than it saves). With enough tiles, no
// split; nor where the tiles already load the multiprocessors evenly (whole waves, the last at
// least 7/8 full) and two slices would each be shorter than kShortKTiles: there slicing only adds
// prologues and the reduction (docs/NOTES.md, "fast": small grids, the weight gradient).
template <int BK>
SplitK plan_split_k(const Problem& p, long tiles, int sms, const SplitKOptions& options = {}) {
  const int k_tiles = (p.k + BK - 1) / BK;
  const long blocks = long(options.blocks_per_sm) * sms;
  const long last_wave = tiles % sms;
  const bool balanced =
      tiles >= sms && (last_wave == 0 || 8 * last_wave >= 7L * sms) && k_tiles < 2 * kShortKTiles;
  if (tiles >= blocks || balanced) return {1, k_tiles * BK};
  const long per_tile = options.one_wave ? blocks / tiles : (blocks + tiles - 1) / tiles;
  const int wanted = int(std::min<long>(per_tile, options.max_splits));
  return k_in_slices<BK>(k_tiles, std::max(1, std::min(wanted, k_tiles / options.min_k_tiles)));
}

// For kernels with several resident blocks per multiprocessor (step 5, fast): the plan, or fewer
// slices where they finish sooner. Blocks run in waves of `resident` (every multiprocessor's
// resident blocks at once), each as long as its slice, so a plan takes about its waves times its
// slice; a few blocks past the last whole wave run as a wave of their own, a whole slice long (fast
// at 384×2000×2000 NT: 192 tiles in 3 slices on 528 resident, 121 µs; in 2, 110 µs; docs/NOTES.md,
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

// In a kernel: narrow the operands to this block's K slice and, when split through the workspace,
// aim the epilogue at the slice's partial product. With one split (blockIdx.z = 0) nothing
// changes.
template <bool KMajorA, bool KMajorB>
__device__ __forceinline__ void enter_k_slice(Operand<KMajorA>& a, Operand<KMajorB>& b, Epilogue& c,
                                              int k_per_split, bool to_workspace = true) {
  const int k0 = blockIdx.z * k_per_split;
  a.p += a.offset(0, k0);
  b.p += b.offset(0, k0);
  a.extent_k = b.extent_k = min(k_per_split, a.extent_k - k0);
  if (to_workspace) c.c += int64_t(blockIdx.z) * c.m * c.ldc;
}

// C = alpha·Σ_z partial[z] + beta·C, the slices summed in order z = 0, 1, …
void launch_split_k_reduce(const Problem& p, const float* partials, int splits,
                           cudaStream_t stream);

// Runs launch(epilogue, k_per_split) — which must launch with gridDim.z = plan.splits and call
// enter_k_slice — straight into C when there is one split, else into the workspace and reduced.
template <class Launch>
void run_split_k(const Problem& p, SplitK plan, cudaStream_t stream, Launch&& launch) {
  if (plan.splits == 1) {
    launch(epilogue(p), p.k);
    return;
  }
  float* partials = stream_workspace(WorkspaceUse::SplitK, size_t(plan.splits) * p.m * p.n, stream);
  launch(Epilogue{partials, p.n, p.m, p.n, 1.0f, 0.0f, p.n % 4 == 0}, plan.k_per_split);
  launch_split_k_reduce(p, partials, plan.splits, stream);
}

}  // namespace gemm::detail
