// Split-K through a thread block cluster, for the production kernels (fast/): the K slices of one
// output tile form a cluster of (1, 1, slices) blocks, stage their partials in their own shared
// memory, and sum them through distributed shared memory (cluster_split_k_store): no workspace,
// no second kernel. sm_90 and newer, up to 8 slices whose clusters all fit at once; elsewhere the
// workspace way of split_k.cuh.
#pragma once

#include <cooperative_groups.h>

#include <algorithm>

#include "base/launch.cuh"
#include "kernels/fast/phase_times.cuh"
#include "kernels/fast/staged_store.cuh"
#include "kernels/pipeline.cuh"
#include "kernels/split_k.cuh"

namespace gemm::detail {

// The most slices the cluster way takes: the portable cluster size.
constexpr int kMaxClusterSplits = 8;

// Whether the current device runs thread block clusters (compute capability 9.0 and newer).
inline bool clusters_supported() { return compute_capability_9_or_newer(); }

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// Thread tid (< NT) of block z of S sums its rows z + S·(tid / (BN/4)), … of the S partials, in
// order q = 0, 1, …, and stores them (staged_store.cuh: every load before the first store). S is
// a template parameter so that the loads unroll into registers.
template <int S, int BM, int BN, int LD, int NT>
__device__ __forceinline__ void cluster_sum_share(const cooperative_groups::cluster_group& cluster,
                                                  const Epilogue& c, const float* partial, int m0,
                                                  int n0, int tid) {
  const float* shares[S];
#pragma unroll
  for (int q = 0; q < S; ++q) shares[q] = cluster.map_shared_rank(partial, q);
  const int first = int(cluster.block_rank()) + (tid / (BN / 4)) * S;
  sum_rows_and_store<S, BM, BN, LD, NT>(shares, c, first, m0, n0, tid);
}

// cluster_sum_share<S> for S = splits, from S0 up to kMaxClusterSplits.
template <int S0, int BM, int BN, int LD, int NT>
__device__ __forceinline__ void cluster_sum_share_of(
    int splits, const cooperative_groups::cluster_group& cluster, const Epilogue& c,
    const float* partial, int m0, int n0, int tid) {
  if (splits == S0) {
    cluster_sum_share<S0, BM, BN, LD, NT>(cluster, c, partial, m0, n0, tid);
  } else if constexpr (S0 < kMaxClusterSplits) {
    cluster_sum_share_of<S0 + 1, BM, BN, LD, NT>(splits, cluster, c, partial, m0, n0, tid);
  } else {
    __trap();  // launch_planned_split_k launches 2 to kMaxClusterSplits slices
  }
}
#endif

// In a kernel launched with cluster dims (1, 1, gridDim.z), 2 ≤ gridDim.z ≤ kMaxClusterSplits:
// `partial` is this block's BM×BN partial product in its own shared memory (row stride LD, 16-byte
// rows). Every thread of the block calls this; after a cluster barrier, threads 0 … NT − 1 of
// block z sum rows z, z + S, … of all S partials, in order z = 0, 1, … as the workspace way does,
// and store them through c at (m0, n0), 4 columns per thread (cluster_sum_share). A second
// barrier keeps every partial alive until the last read.
template <int BM, int BN, int LD, int NT>
__device__ __forceinline__ void cluster_split_k_store(const Epilogue& c, const float* partial,
                                                      int m0, int n0, int tid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  const cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  GEMM_PHASE(SlicesReady);
  if (tid < NT) {
    cluster_sum_share_of<2, BM, BN, LD, NT>(int(cluster.num_blocks()), cluster, c, partial, m0, n0,
                                            tid);
  }
  GEMM_PHASE(Stored);
  cluster.sync();
#else
  __trap();  // launched only where clusters_supported()
#endif
}

// Whether `clusters` clusters of (1, 1, cluster_size) blocks of `kernel` (threads and smem_bytes
// of dynamic shared memory each, already allowed) can all be resident at once on the current
// device (cudaOccupancyMaxActiveClusters, cached per kernel, size and device). A cluster's blocks
// must share a GPC: with one block per multiprocessor, fewer clusters fit than sms / cluster_size,
// and those that do not wait for a second wave.
bool clusters_fit_at_once(const void* kernel, long clusters, int cluster_size, int threads,
                          int smem_bytes);

// A slice of the cluster way may be at most this much longer than the plan's (fewer slices, where
// clusters of the plan's count do not all fit at once). A bound, not a tuned value: it lets the
// M = 256 GEMMs of the default model take 6 slices for their plan's 8, which trains faster than 8
// through the workspace and a reduction kernel (docs/NOTES.md, "Dependent launch and clusters
// that fit"); how much longer still pays is not measured.
constexpr int kClusterSliceGrowthNum = 3, kClusterSliceGrowthDen = 2;

// The split of the cluster way for `plan` (K tiles of BK): the most slices, at most plan.splits
// and 8, for which fits(slices) says the clusters can all be resident at once and whose slices are
// at most 3/2 of the plan's; {1, 0} where there is none.
template <int BK, class Fits>
SplitK cluster_split(const Problem& p, SplitK plan, Fits&& fits) {
  const int k_tiles = (p.k + BK - 1) / BK, plan_tiles = plan.k_per_split / BK;
  for (int splits = std::min(plan.splits, kMaxClusterSplits); splits > 1; --splits) {
    const int tiles_per_split = (k_tiles + splits - 1) / splits;
    if (kClusterSliceGrowthDen * tiles_per_split > kClusterSliceGrowthNum * plan_tiles) break;
    const int used = (k_tiles + tiles_per_split - 1) / tiles_per_split;  // the last may be empty
    if (used > 1 && fits(used)) return {used, tiles_per_split * BK};
  }
  return {1, 0};
}

// Launches a kernel of the form kernel<kClusterSplit>(a, b, c, k_per_split, maps…), of K tile BK,
// over `grid` with K split as `plan` says: summed in the shared memory of clusters where they run
// (cluster_split), otherwise through the workspace (split_k.cuh). Dependently (launch.cuh): both
// kernels call await_prior_kernels() first.
template <int BK, auto kClusterKernel, auto kWorkspaceKernel, class OperandA, class OperandB,
          class... Maps>
void launch_planned_split_k(const Problem& p, SplitK plan, dim3 grid, int threads, int smem_bytes,
                            cudaStream_t stream, const OperandA& a, const OperandB& b,
                            const Maps&... maps) {
  if (plan.splits > 1 && clusters_supported()) {
    allow_dynamic_smem<kClusterKernel>(smem_bytes);
    const SplitK clustered = cluster_split<BK>(p, plan, [&](int splits) {
      return clusters_fit_at_once(reinterpret_cast<const void*>(kClusterKernel),
                                  long(grid.x) * grid.y, splits, threads, smem_bytes);
    });
    if (clustered.splits > 1) {
      grid.z = clustered.splits;
      launch_kernel(kClusterKernel, {grid, dim3(threads), size_t(smem_bytes), stream, grid.z}, a, b,
                    epilogue(p), clustered.k_per_split, maps...);
      return;
    }
  }
  grid.z = plan.splits;
  allow_dynamic_smem<kWorkspaceKernel>(smem_bytes);
  run_split_k(p, plan, stream, [&](const Epilogue& c, int k_per_split) {
    launch_kernel(kWorkspaceKernel, {grid, dim3(threads), size_t(smem_bytes), stream}, a, b, c,
                  k_per_split, maps...);
  });
}

}  // namespace gemm::detail
