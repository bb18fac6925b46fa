// Split-K, shared by the kernels that adapt to small problems (fast, 07–09). When M×N has too few
// output tiles to give every multiprocessor a block (the MLP's M = 256 shapes), blockIdx.z splits
// K, and the slices' partial products are summed in a fixed order, so results are deterministic
// (no atomics) and beta·C is applied once. Two ways:
//   workspace: each slice of blocks writes its partial product to global memory and a second
//     kernel sums them (run_split_k; every GPU);
//   cluster (fast on sm_90 and newer, up to 8 slices): the slices of one output tile form a thread
//     block cluster, stage their partials in their own shared memory, and sum them through
//     distributed shared memory (cluster_split_k_store): no workspace, no second kernel.
#pragma once

#include <cooperative_groups.h>

#include <algorithm>
#include <utility>

#include "kernels/common.cuh"

namespace gemm::detail {

struct SplitK {
  int splits = 1;       // gridDim.z
  int k_per_split = 0;  // a multiple of the K tile
};

// A K slice shorter than this many K tiles spends a large share of its time in its pipeline's
// prologue and the reduction (plan_split_k, finer_tile_beats_split).
constexpr int kShortKTiles = 16;

// With fewer tiles than blocks_per_sm blocks per multiprocessor: enough slices for tiles·splits
// to reach that many, at most max_splits, each at least min_k_tiles K tiles long (a shorter slice
// spends more on its pipeline prologue and the reduction than it saves). With enough tiles, no
// split; nor where the tiles already load the multiprocessors evenly (whole waves, the last at
// least 7/8 full) and two slices would each be shorter than kShortKTiles: there slicing only adds
// prologues and the reduction (docs/KERNELS.md, "fast": small grids, the weight gradient).
// one_wave: never more than that many blocks (tiles·splits rounded down, not up), for kernels of
// one block per multiprocessor, where the blocks beyond would run as a second, mostly idle wave.
template <int BK>
SplitK plan_split_k(const Problem& p, long tiles, int sms, int blocks_per_sm = 1,
                    int max_splits = 16, int min_k_tiles = 4, bool one_wave = false) {
  const int k_tiles = (p.k + BK - 1) / BK;
  const long blocks = long(blocks_per_sm) * sms;
  const long last_wave = tiles % sms;
  const bool balanced =
      tiles >= sms && (last_wave == 0 || 8 * last_wave >= 7L * sms) && k_tiles < 2 * kShortKTiles;
  if (tiles >= blocks || balanced) return {1, k_tiles * BK};
  const long per_tile = one_wave ? blocks / tiles : (blocks + tiles - 1) / tiles;
  const int wanted = int(std::min<long>(per_tile, max_splits));
  const int splits = std::max(1, std::min(wanted, k_tiles / min_k_tiles));
  const int tiles_per_split = (k_tiles + splits - 1) / splits;
  // Recount: rounding the slice length up can leave the last slices empty.
  return {(k_tiles + tiles_per_split - 1) / tiles_per_split, tiles_per_split * BK};
}

// Whether a finer tile whose grid fills the chip unsplit (plan `fine`) should replace a coarser
// tile whose plan splits K into slices shorter than kShortKTiles K tiles of BK: the finer tile
// reuses each operand load less, but spares the slices' prologues and the reduction
// (docs/KERNELS.md, "fast": small grids, the weight gradient).
template <int BK>
bool finer_tile_beats_split(const SplitK& coarse, const SplitK& fine) {
  return coarse.splits > 1 && coarse.k_per_split < kShortKTiles * BK && fine.splits == 1;
}

// A launcher's tile choice (step 8's): Large when it gives every multiprocessor a block, unsplit;
// otherwise Small, with K split across blocks until the grid fills the chip.
// launch(TileTag<Cfg>{}, plan) launches with tile config Cfg.
template <class Cfg>
struct TileTag {
  using type = Cfg;
};
template <class Large, class Small, class Launch>
void launch_large_or_split_k(const Problem& p, Launch&& launch) {
  const int sms = multiprocessor_count();
  if (tile_count<Large::kBm, Large::kBn>(p) >= sms) {
    launch(TileTag<Large>{}, SplitK{1, p.k});
    return;
  }
  launch(TileTag<Small>{}, plan_split_k<Small::kBk>(p, tile_count<Small::kBm, Small::kBn>(p), sms));
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

// The most slices the cluster way takes: the portable cluster size.
constexpr int kMaxClusterSplits = 8;

// Whether the current device runs thread block clusters (compute capability 9.0 and newer).
bool clusters_supported();

// In a kernel launched with cluster dims (1, 1, gridDim.z): `partial` is this block's BM×BN
// partial product in its own shared memory (row stride LD, 16-byte rows). Every thread of the
// block calls this; after a cluster barrier, threads 0 … NT − 1 of block z sum rows z, z + S, …
// of all S partials, in order z = 0, 1, … as the workspace way does, and store them through c at
// (m0, n0), 4 columns per thread. A second barrier keeps every partial alive until the last read.
template <int BM, int BN, int LD, int NT>
__device__ __forceinline__ void cluster_split_k_store(const Epilogue& c, const float* partial,
                                                      int m0, int n0, int tid) {
  static_assert(BN % 4 == 0 && LD % 4 == 0 && NT % (BN / 4) == 0,
                "a row is read a float4 at a time by a whole number of row groups of threads");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  const int splits = int(cluster.num_blocks()), z = int(cluster.block_rank());
  constexpr int kRowsPerPass = NT / (BN / 4);
  const int col = (tid % (BN / 4)) * 4;
  for (int r = z + (tid / (BN / 4)) * splits; tid < NT && r < BM; r += kRowsPerPass * splits) {
    float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int q = 0; q < splits; ++q) {
      const float4 v =
          *reinterpret_cast<const float4*>(cluster.map_shared_rank(partial, q) + r * LD + col);
      sum.x += v.x;
      sum.y += v.y;
      sum.z += v.z;
      sum.w += v.w;
    }
    c.store4(m0 + r, n0 + col, sum);
  }
  cluster.sync();
#else
  __trap();  // launched only where clusters_supported()
#endif
}

// Whether `clusters` clusters of (1, 1, cluster_size) blocks of `kernel` (threads and smem_bytes
// of dynamic shared memory each, already allowed) can all be resident at once on the current
// device (cudaOccupancyMaxActiveClusters, cached per kernel and size). A cluster's blocks must
// share a GPC: with one block per multiprocessor, fewer clusters fit than sms / cluster_size, and
// those that do not wait for a second wave.
bool clusters_fit_at_once(const void* kernel, long clusters, int cluster_size, int threads,
                          int smem_bytes);

// Launches kernel<<<grid, threads, smem_bytes, stream>>>(args…) with clusters of (1, 1, grid.z).
template <class... Params, class... Args>
void launch_split_k_cluster(void (*kernel)(Params...), dim3 grid, int threads, int smem_bytes,
                            cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = size_t(smem_bytes);
  config.stream = stream;
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = 1;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = grid.z;
  config.attrs = &cluster;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
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
