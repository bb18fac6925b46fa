// The production warp-specialised wgmma kernel (wgmma_pipeline.cuh has its two roles): one output
// tile a block, K split across a cluster or through the workspace where the grid is small, and its
// launchers for any pair of tiles. sm_90a only: include from files that kernels/CMakeLists.txt
// compiles for sm_90a.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#pragma once

#include <string>
#include <type_traits>

#include "kernels/fast/split_k_rules.cuh"
#include "kernels/fast/wgmma_pipeline.cuh"

namespace gemm::detail {

// kClusterSplit: the K slices of a tile form a cluster and sum their partials in shared memory
// (split_k.cuh); otherwise each slice writes its own (the workspace, or C when unsplit).
template <class Cfg, bool KMajorA, bool KMajorB, bool kClusterSplit>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_pipeline_kernel(Operand<KMajorA> a, Operand<KMajorB> b, Epilogue c, int k_per_split,
                          const __grid_constant__ CUtensorMap map_a,
                          const __grid_constant__ CUtensorMap map_b, bool tma_a, bool tma_b) {
  using Layout = typename Cfg::template For<KMajorA, KMajorB>;
  GEMM_PHASE_BEGIN(Pipeline);
  const int k_begin = blockIdx.z * k_per_split;
  enter_k_slice(a, b, c, k_per_split, !kClusterSplit);
  extern __shared__ float smem_raw[];
  const WsPipelineSmem<Cfg, KMajorA, KMajorB> s(smem_raw);
  const int tid = threadIdx.x, warpgroup = tid / 128;
  const int m0 = blockIdx.y * Cfg::kBm, n0 = blockIdx.x * Cfg::kBn;
  const int k_tiles = (a.extent_k + Cfg::kBk - 1) / Cfg::kBk;

  // The set-up touches only shared memory and the parameters: it overlaps the previous kernel.
  if (tid == 0) {
    s.init_barriers();
    if (tma_a) prefetch_tile_map(&map_a);
    if (tma_b) prefetch_tile_map(&map_b);
  }
  __syncthreads();  // the last block-wide barrier: from here the two roles run apart
  GEMM_PHASE(SetUp);
  await_prior_kernels();
  GEMM_PHASE(Awaited);

  if (warpgroup == Cfg::kConsumers) {
    const ProducerOperand<Cfg::kBm, KMajorA> pa{tma_a ? &map_a : nullptr, m0, k_begin};
    const ProducerOperand<Cfg::kBn, KMajorB> pb{tma_b ? &map_b : nullptr, n0, k_begin};
    ws_produce_tile<Cfg>(s, pa, pb, a, b, k_tiles, 0, tid - 128 * Cfg::kConsumers);
  } else {
    ws_consume_tile<Cfg>(s, k_tiles, 0, tid);
  }
  store_consumers_tile<Cfg::kBm, Cfg::kBn, Layout::kOutputLd, 128 * Cfg::kConsumers, kClusterSplit>(
      c, s.smem, m0, n0, tid);
  GEMM_PHASE_END();
}

// The operands' TMA maps in the pipeline's boxes, wherever the operand is aligned (TMA needs a
// 16-byte aligned base and ld % 4 == 0); a misaligned operand's map stays zero, its flag false.
template <class Cfg>
struct PipelineMaps {
  CUtensorMap a{}, b{};
  bool tma_a = false, tma_b = false;
  template <bool KMajorA, bool KMajorB>
  PipelineMaps(const Operand<KMajorA>& op_a, const Operand<KMajorB>& op_b)
      : tma_a(op_a.vec4_ok), tma_b(op_b.vec4_ok) {
    if (tma_a) a = make_tile_map(op_a, Cfg::kBm);
    if (tma_b) b = make_tile_map(op_b, Cfg::kBn);
  }
};

// Runs the pipeline with tile Tile and split-K plan `plan` on p, whose layout makes A and B
// K-major as KMajorA and KMajorB say (any alignment).
template <class Tile, bool KMajorA, bool KMajorB>
void launch_wgmma_pipeline_layout(const Problem& p, SplitK plan, cudaStream_t stream) {
  using Cfg = WsPipeline<Tile>;
  using Layout = typename Cfg::template For<KMajorA, KMajorB>;
  const Operand<KMajorA> a = operand_a<KMajorA>(p);
  const Operand<KMajorB> b = operand_b<KMajorB>(p);
  const PipelineMaps<Cfg> maps(a, b);
  launch_planned_split_k<Cfg::kBk, wgmma_pipeline_kernel<Cfg, KMajorA, KMajorB, true>,
                         wgmma_pipeline_kernel<Cfg, KMajorA, KMajorB, false>>(
      p, plan, tile_grid<Cfg::kBm, Cfg::kBn>(p), Cfg::kThreads, Layout::kSmemBytes, stream, a, b,
      maps.a, maps.b, maps.tma_a, maps.tma_b);
}

// The same in any layout.
template <class Tile>
void launch_wgmma_pipeline_config(const Problem& p, SplitK plan, cudaStream_t stream) {
  with_layout(p, [&](auto a_k_major, auto b_k_major) {
    launch_wgmma_pipeline_layout<Tile, decltype(a_k_major)::value, decltype(b_k_major)::value>(
        p, plan, stream);
  });
}

// The tile choice among the pipeline's tiles: the large tile when it gives every multiprocessor a
// block; otherwise the small one, with K split across blocks until the grid fills one wave
// (split_k.cuh), or, where that costs less (split_k_rules.cuh), the large one split so or, with
// both operands K-major, the narrow one split so (Narrow = void: none). wgmma_pipeline.cu gives
// tf32_fast's and tf32x3_fast's tiles (wgmma_pipeline_tiles.cuh); tools/tune/ times other tiles
// through it.
template <class Large, class Small, class Narrow = void>
void launch_wgmma_pipeline_tiles(const Problem& p, cudaStream_t stream) {
  if (const char* why = wgmma_unavailable()) throw Error(std::string("gemm: ") + why);
  constexpr int kBk = WsPipeline<Small>::kBk;
  static_assert(WsPipeline<Large>::kBk == kBk, "both tiles take K tiles of one size");
  const int sms = multiprocessor_count();
  const long large_tiles = tile_count<Large::kBlockM, Large::kBlockN>(p);
  if (large_tiles >= sms) {
    launch_wgmma_pipeline_config<Large>(p, SplitK{1, p.k}, stream);
    return;
  }
  // One block per multiprocessor: the slices fill one wave, never spill into a second.
  const long small_tiles = tile_count<Small::kBlockM, Small::kBlockN>(p);
  const SplitK small = plan_split_k<kBk>(p, small_tiles, sms, {.one_wave = true});
  const SplitK large = plan_split_k<kBk>(p, large_tiles, sms, {.one_wave = true});
  if (large_tile_split_beats_small<kBk>(large_tiles, large, small_tiles, small, sms)) {
    launch_wgmma_pipeline_config<Large>(p, large, stream);
    return;
  }
  if constexpr (!std::is_void_v<Narrow>) {
    static_assert(WsPipeline<Narrow>::kBk == kBk, "every tile takes K tiles of one size");
    if (p.op_a == Op::N && p.op_b == Op::T) {  // both K-major
      const long narrow_tiles = tile_count<Narrow::kBlockM, Narrow::kBlockN>(p);
      const SplitK narrow = plan_split_k<kBk>(p, narrow_tiles, sms, {.one_wave = true});
      if (narrow_tile_beats_small<kBk>(narrow_tiles, narrow, Narrow::kKTileCost, small_tiles, small,
                                       sms)) {
        launch_wgmma_pipeline_layout<Narrow, true, true>(p, narrow, stream);
        return;
      }
    }
  }
  launch_wgmma_pipeline_config<Small>(p, small, stream);
}

}  // namespace gemm::detail
