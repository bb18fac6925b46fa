// Split-K, shared by the variants that adapt to small problems (06, 07). When M×N has too few
// output tiles to give every multiprocessor a block (the MLP's M = 256 shapes), blockIdx.z splits
// K: each slice of blocks writes its partial product to a workspace, and a second kernel sums the
// slices in a fixed order, so results are deterministic (no atomics) and beta·C is applied once.
#pragma once

#include <algorithm>

#include "kernels/common.cuh"

namespace gemm::detail {

struct SplitK {
  int splits = 1;       // gridDim.z
  int k_per_split = 0;  // a multiple of the K tile
};

// With fewer tiles than multiprocessors: enough slices for tiles·splits to reach blocks_per_sm
// blocks per multiprocessor, each at least kMinKTiles K tiles long (a shorter slice spends more on
// its pipeline prologue and the reduction than it saves). With enough tiles, no split.
template <int BK>
SplitK plan_split_k(const Problem& p, long tiles, int sms, int blocks_per_sm = 1) {
  constexpr int kMinKTiles = 4;
  const int k_tiles = (p.k + BK - 1) / BK;
  if (tiles >= sms) return {1, k_tiles * BK};
  const long blocks = long(blocks_per_sm) * sms;
  const int wanted = int(std::min<long>((blocks + tiles - 1) / tiles, 16));
  const int splits = std::max(1, std::min(wanted, k_tiles / kMinKTiles));
  const int tiles_per_split = (k_tiles + splits - 1) / splits;
  // Recount: rounding the slice length up can leave the last slices empty.
  return {(k_tiles + tiles_per_split - 1) / tiles_per_split, tiles_per_split * BK};
}

// In a kernel: narrow the operands to this block's K slice and, when split, aim the epilogue at
// the slice's partial product. With one split (blockIdx.z = 0) nothing changes.
template <bool KCA, bool KCB>
__device__ __forceinline__ void enter_k_slice(Operand<KCA>& a, Operand<KCB>& b, Epilogue& c,
                                              int k_per_split) {
  const int k0 = blockIdx.z * k_per_split;
  a.p += a.offset(0, k0);
  b.p += b.offset(0, k0);
  a.extent_k = b.extent_k = min(k_per_split, a.extent_k - k0);
  c.c += int64_t(blockIdx.z) * c.m * c.ldc;
}

// The workspace for `floats` partial results on `stream`'s device: one grow-only buffer per device
// and stream, so the first call of a shape allocates and later calls do not.
float* split_k_workspace(size_t floats, cudaStream_t stream);

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
  float* partials = split_k_workspace(size_t(plan.splits) * p.m * p.n, stream);
  launch(Epilogue{partials, p.n, p.m, p.n, 1.0f, 0.0f, p.n % 4 == 0}, plan.k_per_split);
  launch_split_k_reduce(p, partials, plan.splits, stream);
}

}  // namespace gemm::detail
