// The GEMM tile of a persistent kernel: the device-side face of kernels/ for a kernel that runs
// the tiles of many GEMMs in one launch, as the engine's step kernel does (engine/step_kernel.cu;
// docs/NOTES.md, "The step as one kernel"). Beside kernels/gemm.h, the one header that code
// outside kernels/ may include from it (tests/scripts/layering_test.sh).
//
// It is tf32_fast's and tf32x3_fast's pipeline (wgmma_pipeline.cuh) over one 128×128 output tile
// at a time: the caller's block runs tile after tile, the barriers' phases carried from one to the
// next in a running count of K tiles per layout, and separates its tiles with __syncthreads. The
// three layouts of a training step run over the same shared memory, each with barriers of its
// own. A tile may cover a K slice: its partial then goes wherever the caller's epilogue says. Or
// the blocks of a cluster each take a share of the tile's K (k_share) and add their partials in
// distributed shared memory, as tf32_fast's cluster split-K does (cluster_split_k.cuh).
// sm_90a only.
//   NT: C = A·Bᵀ, A: M×K, B: N×K (a linear layer's forward, Y = X·Wᵀ)
//   NN: C = A·B, A: M×K, B: K×N (its input gradient, dX = G·W)
//   TN: C = Aᵀ·B, A: K×M, B: K×N (its weight gradient, dW = Gᵀ·X)
#pragma once

#include <algorithm>
#include <type_traits>

#include "kernels/fast/cluster_split_k.cuh"
#include "kernels/fast/wgmma_pipeline.cuh"
#include "kernels/fast/wgmma_pipeline_tiles.cuh"
#include "kernels/gemm.h"

namespace gemm::step_tile {

// The arithmetic of tf32_fast (one TF32 product) or of tf32x3_fast (three, fp32-accurate).
enum class Arithmetic { Tf32, Tf32x3 };

// A training step's layouts, by which operands are K-major (the pipeline's producer transposes
// an MN-major tile in shared memory).
enum class Layout { NT, NN, TN };
template <Layout L>
constexpr bool kKMajorA = L != Layout::TN;
template <Layout L>
constexpr bool kKMajorB = L == Layout::NT;

template <Arithmetic A>
struct Tile {
  // What a persistent kernel keeps in shared memory beside the pipelines: the three layouts'
  // barriers and its own variables (its static shared memory).
  static constexpr int kReservedBytes = 4096;
  using Cfg =
      detail::WsPipeline<std::conditional_t<A == Arithmetic::Tf32, detail::Tf32PipelineSmallTile,
                                            detail::Tf32x3PipelineTile>,
                         detail::kWsSmemBudgetFloats - kReservedBytes / int(sizeof(float))>;
  template <Layout L>
  using For = typename Cfg::template For<kKMajorA<L>, kKMajorB<L>>;
  template <Layout L>
  using Smem = detail::WsPipelineSmem<Cfg, kKMajorA<L>, kKMajorB<L>>;
  static constexpr int kM = Cfg::kBm, kN = Cfg::kBn, kK = Cfg::kBk;
  static constexpr int kThreads = Cfg::kThreads;                  // consumers, then the producer
  static constexpr int kConsumerThreads = 128 * Cfg::kConsumers;  // threads 0 .. this − 1

  // A block's dynamic shared memory: the largest layout's pipeline from the first 1 KB boundary,
  // then each layout's barriers, NT's, NN's, TN's.
  static constexpr int kPipelineFloats =
      std::max({For<Layout::NT>::kPipelineFloats, For<Layout::NN>::kPipelineFloats,
                For<Layout::TN>::kPipelineFloats});
  template <Layout L>
  static constexpr int kFirstBarrier =
      L == Layout::NT   ? 0
      : L == Layout::NN ? For<Layout::NT>::kBarriers
                        : For<Layout::NT>::kBarriers + For<Layout::NN>::kBarriers;
  static constexpr int kBarriers = kFirstBarrier<Layout::TN> + For<Layout::TN>::kBarriers;
  static constexpr int kSmemBytes = 1024 + kPipelineFloats * int(sizeof(float)) + 8 * kBarriers;
  static_assert(kPipelineFloats % 2 == 0, "the barriers after the pipelines are 8-byte aligned");
  static_assert(8 * kBarriers <= kReservedBytes, "the barriers fit in the reserved bytes");
  static_assert(kSmemBytes + kReservedBytes - 8 * kBarriers <= 227 * 1024,
                "the pipelines, the barriers and the kernel's own variables fit in 227 KB");
};

// Layout L's view of a block's shared memory (Tile<A>::kSmemBytes from smem_raw), its barriers
// apart from the other layouts'.
template <Arithmetic A, Layout L>
__device__ __forceinline__ typename Tile<A>::template Smem<L> smem_of(float* smem_raw) {
  using T = Tile<A>;
  using S = typename T::template Smem<L>;
  uint64_t* barriers = reinterpret_cast<uint64_t*>(S::aligned(smem_raw) + T::kPipelineFloats);
  return S(smem_raw, barriers + T::template kFirstBarrier<L>);
}

// One GEMM of layout L as the tiles read it: its operands (with TMA maps where aligned: a 16-byte
// aligned base and ld % 4 == 0; the others copied by the producer's threads) and its epilogue.
// Lives in a kernel's __grid_constant__ parameters: TMA reads the maps there.
template <Layout L>
struct TileGemm {
  CUtensorMap map_a, map_b;  // zero where the operand is misaligned
  detail::Operand<kKMajorA<L>> a;
  detail::Operand<kKMajorB<L>> b;
  detail::Epilogue c;
  bool tma_a, tma_b;
};
using NtGemm = TileGemm<Layout::NT>;

// p (gemm.h's contract) as a TileGemm of layout L for Tile<A>. Throws gemm::Error where p breaks
// the contract or has another layout.
template <Arithmetic A, Layout L>
TileGemm<L> tile_gemm(const Problem& p) {
  validate(p);
  const Op op_a = kKMajorA<L> ? Op::N : Op::T, op_b = kKMajorB<L> ? Op::T : Op::N;
  if (p.op_a != op_a || p.op_b != op_b)
    throw Error("step_tile: a tile of layout " + layout_name(op_a, op_b) + " given a " +
                layout_name(p.op_a, p.op_b) + " GEMM");
  using Cfg = typename Tile<A>::Cfg;
  TileGemm<L> g{};
  g.a = detail::operand_a<kKMajorA<L>>(p);
  g.b = detail::operand_b<kKMajorB<L>>(p);
  g.c = detail::epilogue(p);
  const detail::PipelineMaps<Cfg> maps(g.a, g.b);
  g.map_a = maps.a, g.map_b = maps.b;
  g.tma_a = maps.tma_a, g.tma_b = maps.tma_b;
  return g;
}

// Thread 0, once per block, before its first tile: every layout's barriers in smem_raw (the
// block's dynamic shared memory, Tile<A>::kSmemBytes). The caller publishes them (__syncthreads).
template <Arithmetic A>
__device__ __forceinline__ void init_pipelines(float* smem_raw) {
  smem_of<A, Layout::NT>(smem_raw).init_barriers();
  smem_of<A, Layout::NN>(smem_raw).init_barriers();
  smem_of<A, Layout::TN>(smem_raw).init_barriers();
}

// One thread: g's TMA maps fetched into the multiprocessor's descriptor cache, so that the first
// tile of g a block runs does not wait for them.
template <Layout L>
__device__ __forceinline__ void prefetch_maps(const TileGemm<L>& g) {
  if (g.tma_a) asm volatile("prefetch.tensormap [%0];\n" ::"l"(&g.map_a) : "memory");
  if (g.tma_b) asm volatile("prefetch.tensormap [%0];\n" ::"l"(&g.map_b) : "memory");
}

// Orders this thread's generic-proxy accesses of global memory with its async-proxy ones (TMA):
// a writer's stores before the release that lets another block's TMA read them; a reader's
// acquire before its TMA copies.
__device__ __forceinline__ void fence_proxy_async_global() {
  asm volatile("fence.proxy.async.global;\n" ::: "memory");
}

// The GPU's global timer (ns): for a caller's timeline of its tiles.
__device__ __forceinline__ long long global_ns() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Block `rank` of `size`'s share of the K range [k0, k0 + k_len) of a tile split across a
// cluster: whole K tiles, in rank order, the last share ending where the range does; a share past
// the range's end is empty (k_len 0).
struct KShare {
  int k0, k_len;
};
template <Arithmetic A>
__device__ __forceinline__ KShare k_share(int k0, int k_len, int rank, int size) {
  constexpr int kK = Tile<A>::kK;
  const int per_rank = ((k_len + kK - 1) / kK + size - 1) / size * kK;
  const int begin = min(rank * per_rank, k_len), end = min(begin + per_rank, k_len);
  return {k0 + begin, end - begin};
}

// Every thread of the block (Tile<A>::kThreads): output tile (m0, n0) of g over k in
// [k0, k0 + k_len), stored through c (g.c; or, for a K slice, a partial tile's epilogue). k0 is a
// multiple of Tile<A>::kK, and so is k_len unless the slice ends at K: a TMA copy reads whole
// K tiles; k_len may be 0 (a zero partial). With cluster_sum, every block of the cluster (launched
// with dims (1, 1, S)) calls this for the same tile, each on its k_share, and all of them store
// the sum of the S partials, added in rank order (the same bits every run), through c.
// `issued` is the count of K tiles the block's pipeline ran before in layout L (0 for its first
// tile of L); returns this tile's, to add to it. Whatever the tile reads that other blocks wrote
// in this launch, the caller has acquired before (thread 0, then __syncthreads); the caller
// separates this tile from the block's next with __syncthreads. Where `stamps` is set, thread 0
// (a consumer) writes global_ns() into stamps[0] once its K loop is done and its warpgroup's share
// staged, into stamps[1] once every consumer's is, and into stamps[2] once the tile is stored
// (after the cluster's sum).
template <Arithmetic A, Layout L>
__device__ __forceinline__ int run_tile(float* smem_raw, const TileGemm<L>& g,
                                        const detail::Epilogue& c, int m0, int n0, int k0,
                                        int k_len, int issued, bool cluster_sum,
                                        long long* stamps = nullptr) {
  using T = Tile<A>;
  using Cfg = typename T::Cfg;
  constexpr bool KMajorA = kKMajorA<L>, KMajorB = kKMajorB<L>;
  const auto s = smem_of<A, L>(smem_raw);
  const int tid = threadIdx.x;
  const int k_tiles = (k_len + T::kK - 1) / T::kK;
  if (tid >= T::kConsumerThreads) {
    detail::Operand<KMajorA> a = g.a;  // the slice, for the producer's own copies
    detail::Operand<KMajorB> b = g.b;
    a.p += a.offset(0, k0);
    b.p += b.offset(0, k0);
    a.extent_k = b.extent_k = k_len;
    fence_proxy_async_global();
    const detail::ProducerOperand<Cfg::kBm, KMajorA> pa{g.tma_a ? &g.map_a : nullptr, m0, k0};
    const detail::ProducerOperand<Cfg::kBn, KMajorB> pb{g.tma_b ? &g.map_b : nullptr, n0, k0};
    detail::ws_produce_tile<Cfg>(s, pa, pb, a, b, k_tiles, issued, tid - T::kConsumerThreads, true);
  } else {
    detail::ws_consume_tile<Cfg>(s, k_tiles, issued, tid);
    if (stamps != nullptr && tid == 0) stamps[0] = global_ns();
  }
  // store_consumers_tile's two steps, with a stamp between them.
  constexpr int kLd = T::template For<L>::kOutputLd;
  if (tid < T::kConsumerThreads) detail::consumer_barrier(T::kConsumerThreads);
  if (stamps != nullptr && tid == 0) stamps[1] = global_ns();
  if (cluster_sum)  // every thread: the cluster's barriers
    detail::cluster_split_k_store<Cfg::kBm, Cfg::kBn, kLd, T::kConsumerThreads>(c, s.smem, m0, n0,
                                                                                tid);
  else if (tid < T::kConsumerThreads)
    detail::store_staged_tile<Cfg::kBm, Cfg::kBn, kLd, T::kConsumerThreads>(c, s.smem, m0, n0, tid);
  if (stamps != nullptr && tid == 0) stamps[2] = global_ns();
  if (tid < T::kConsumerThreads) {
    fence_proxy_async_global();
    // The last K tile's stage back to the producer (ws_consume_tile keeps it).
    if (k_tiles > 0)
      detail::mbarrier_arrive(&s.empty[(issued + k_tiles - 1) % T::template For<L>::kStages]);
  }
  return k_tiles;
}

}  // namespace gemm::step_tile
