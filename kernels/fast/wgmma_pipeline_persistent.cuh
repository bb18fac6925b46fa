// The production wgmma pipeline (wgmma_pipeline.cuh) run persistently: each block computes output
// tile after output tile with the pipeline's two roles, their barriers' phases carried from one
// tile to the next. sm_90a only: include from files that kernels/CMakeLists.txt compiles for
// sm_90a.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#pragma once

#include <algorithm>
#include <string>

#include "kernels/fast/wgmma_pipeline_kernel.cuh"

namespace gemm::detail {

// The pipeline run persistently: block b takes output tiles b, b + gridDim.x, … over the whole of K
// (no split), its barriers initialised once and their phases carried from one tile to the next. The
// output tile is staged over the stages, so the producer starts a tile's copies only once every
// consumer has stored the block's last one ("output_free"). Any grid: blocks never wait for each
// other.
template <class Cfg, bool KMajorA, bool KMajorB>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_pipeline_persistent_kernel(Operand<KMajorA> a, Operand<KMajorB> b, Epilogue c,
                                     const __grid_constant__ CUtensorMap map_a,
                                     const __grid_constant__ CUtensorMap map_b, bool tma_a,
                                     bool tma_b) {
  using Layout = typename Cfg::template For<KMajorA, KMajorB>;
  constexpr int kConsumerThreads = 128 * Cfg::kConsumers;
  extern __shared__ float smem_raw[];
  __shared__ uint64_t output_free;
  const WsPipelineSmem<Cfg, KMajorA, KMajorB> s(smem_raw);
  const int tid = threadIdx.x, warpgroup = tid / 128;
  const int tiles_n = (c.n + Cfg::kBn - 1) / Cfg::kBn;
  const int tiles = (c.m + Cfg::kBm - 1) / Cfg::kBm * tiles_n;
  const int k_tiles = (a.extent_k + Cfg::kBk - 1) / Cfg::kBk;
  GEMM_PHASE_NONE();  // ws_consume_tile's stamps: not recorded here

  if (tid == 0) {
    s.init_barriers();
    mbarrier_init(&output_free, kConsumerThreads);
    fence_mbarrier_init();
  }
  __syncthreads();

  int issued = 0;  // K tiles this block's pipeline has run
  for (int tile = blockIdx.x, round = 0; tile < tiles;
       tile += gridDim.x, issued += k_tiles, ++round) {
    const int m0 = tile / tiles_n * Cfg::kBm, n0 = tile % tiles_n * Cfg::kBn;
    if (warpgroup == Cfg::kConsumers) {
      if (round > 0) mbarrier_wait(&output_free, (round - 1) & 1);
      const ProducerOperand<Cfg::kBm, KMajorA> pa{tma_a ? &map_a : nullptr, m0, 0};
      const ProducerOperand<Cfg::kBn, KMajorB> pb{tma_b ? &map_b : nullptr, n0, 0};
      ws_produce_tile<Cfg>(s, pa, pb, a, b, k_tiles, issued, tid - kConsumerThreads);
    } else {
      ws_consume_tile<Cfg>(s, k_tiles, issued, tid);
      store_consumers_tile<Cfg::kBm, Cfg::kBn, Layout::kOutputLd, kConsumerThreads, false>(
          c, s.smem, m0, n0, tid);
      // This thread is done with the shared memory: the last K tile's stage goes back to the
      // producer, and with every consumer's arrival the staged output's memory too.
      mbarrier_arrive(&s.empty[(issued + k_tiles - 1) % Layout::kStages]);
      mbarrier_arrive(&output_free);
    }
  }
}

// Runs wgmma_pipeline_persistent_kernel with tile Tile on min(blocks, tiles) blocks (any layout and
// alignment; K unsplit).
template <class Tile>
void launch_wgmma_pipeline_persistent(const Problem& p, int blocks, cudaStream_t stream) {
  if (const char* why = wgmma_unavailable()) throw Error(std::string("gemm: ") + why);
  using Cfg = WsPipeline<Tile>;
  with_layout(p, [&](auto a_k_major, auto b_k_major) {
    constexpr bool KMajorA = decltype(a_k_major)::value, KMajorB = decltype(b_k_major)::value;
    constexpr int smem_bytes = Cfg::template For<KMajorA, KMajorB>::kSmemBytes;
    static_assert(smem_bytes + 8 <= 227 * 1024,
                  "the pipeline and the output_free barrier must fit in 227 KB");
    constexpr auto kKernel = wgmma_pipeline_persistent_kernel<Cfg, KMajorA, KMajorB>;
    const Operand<KMajorA> a = operand_a<KMajorA>(p);
    const Operand<KMajorB> b = operand_b<KMajorB>(p);
    const PipelineMaps<Cfg> maps(a, b);
    allow_dynamic_smem<kKernel>(smem_bytes);
    const long tiles = tile_count<Cfg::kBm, Cfg::kBn>(p);
    const int grid = int(std::min<long>(std::max(blocks, 1), tiles));
    kKernel<<<grid, Cfg::kThreads, smem_bytes, stream>>>(a, b, epilogue(p), maps.a, maps.b,
                                                         maps.tma_a, maps.tma_b);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace gemm::detail
