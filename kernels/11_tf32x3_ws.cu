// Step 11 — step 10's fp32-accurate 3×TF32 on step 9's Hopper machinery. wgmma reads its operands
// from shared memory, not registers, so the remainders must be there too: each stage gains a
// second part, the same swizzled A and B tiles holding lo(x) = tf32(x − trunc(x)). The high part
// is the landed tile itself, which the tensor cores read as trunc(x), its top 19 bits; hi + lo
// then carries x to about 2⁻²¹ relative. The consumers write the remainders of each stage as it
// fills (each thread a share, then a barrier among them), while the tensor cores still run the
// previous tile's batch, and issue three wgmma per step: lo_a·hi_b, hi_a·lo_b, hi_a·hi_b
// (wgmma.cuh's wgmma_ops::Tf32x3).
// Change from 09: the arithmetic (a stage's second part, written by the consumers; three products
// per step) and the tile. The producer and its TMA copies are 09's; a stage is twice the size, so
// the tile is 128×128 in 3 stages (2 where an operand is MN-major and its staging area needs the
// room): 256×128 stages of 96 KB would fit only twice.
// Production (fast/wgmma_pipeline.cuh) runs the same arithmetic on step 9's production pipeline.
// Inputs must be finite: an infinite x gives lo = ∞ − ∞ = NaN.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
//
// Run it (a build in build/, scripts/train.sh makes one):
//   build/apps/gemm_bench/gemm_bench --variants tf32x3,tf32x3_ws --shapes 4096
//   scripts/train.sh --gemm tf32x3_ws --epochs 2
#include <string>

#include "kernels/launchers.h"
#include "kernels/split_k.cuh"
#include "kernels/tma.cuh"
#include "kernels/wgmma.cuh"

namespace gemm::detail {
namespace {

// 128×128, two consumers of 64×128, 3 stages of 64 KB: both for full grids and, with split-K,
// for small ones. kStages is the most stages wanted; fewer where the staging areas need the room.
struct Tf32x3Tile {
  static constexpr int kBlockM = 128, kBlockN = 128, kStages = 3, kConsumers = 2;
};
using Arithmetic = wgmma_ops::Tf32x3;

// Tile's derived sizes for one layout. A stage: the swizzled A and B tiles wgmma reads and their
// remainders (two parts), then the staging areas of the MN-major operands; after the stages, three
// mbarriers per stage. + 1 KB to align the tiles to the 1024-byte swizzle atoms.
template <class Tile, bool KMajorA, bool KMajorB>
struct WsShape {
  static constexpr int kBm = Tile::kBlockM, kBn = Tile::kBlockN, kBk = kPanelK;  // a TMA box: 32 k
  static constexpr int kConsumers = Tile::kConsumers;
  static constexpr int kWm = kBm / kConsumers;             // rows per consumer warpgroup
  static constexpr int kThreads = 128 * (kConsumers + 1);  // + one producer warpgroup
  using SourceA = TmaTileSource<kBm, KMajorA>;
  using SourceB = TmaTileSource<kBn, KMajorB>;
  static constexpr int kPartFloats = (kBm + kBn) * kBk;  // the A and B tiles, or their remainders
  static constexpr int kTileFloats = Arithmetic::kParts * kPartFloats;
  static constexpr int kStageFloats = kTileFloats + SourceA::kStagedFloats + SourceB::kStagedFloats;
  static constexpr int kStagesFit = kWsSmemBudgetFloats / kStageFloats;
  static constexpr int kStages = kStagesFit < Tile::kStages ? kStagesFit : Tile::kStages;
  static constexpr int kSmemBytes =
      kStages * kStageFloats * int(sizeof(float)) + 3 * kStages * int(sizeof(uint64_t)) + 1024;
  static_assert(kBm % kConsumers == 0 && kWm % kWgmmaM == 0,
                "each consumer owns a whole number of 64-row wgmma tiles");
  static_assert(kBn % kWgmmaN == 0, "the block's columns are split into 128-column wgmma tiles");
  static_assert(kBm <= 256 && kBn <= 256, "a TMA box spans at most 256 rows");
  static constexpr int kOutputLd = kBn + 8;  // ≡ 8 (mod 32): conflict-free float2 writes
  static_assert(kBm * kOutputLd <= kStages * kStageFloats,
                "the staged output tile must fit in the stages' shared memory");
  static_assert(kStages >= 2, "the producer fills one stage while the consumers read another");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
};

// C[BM×BN] block tile at (blockIdx.y·BM, blockIdx.x·BN) over the K slice blockIdx.z; A and B must
// be 16-byte aligned with ld % 4 == 0 (map_a, map_b: make_tile_map). kThreads threads: consumer
// warpgroups 0 … kConsumers − 1, then the producer warpgroup.
template <class Tile, bool KMajorA, bool KMajorB>
__global__ void __launch_bounds__(WsShape<Tile, KMajorA, KMajorB>::kThreads, 1)
    tf32x3_ws_kernel(Operand<KMajorA> a, Operand<KMajorB> b, Epilogue c, int k_per_split,
                     const __grid_constant__ CUtensorMap map_a,
                     const __grid_constant__ CUtensorMap map_b) {
  using S = WsShape<Tile, KMajorA, KMajorB>;
  const int k_begin = blockIdx.z * k_per_split;
  enter_k_slice(a, b, c, k_per_split);
  extern __shared__ float smem_raw[];
  float* smem = smem_raw + ((1024 - smem_address(smem_raw) % 1024) % 1024) / sizeof(float);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + S::kStages * S::kStageFloats);
  uint64_t* empty = full + S::kStages;
  uint64_t* landed = empty + S::kStages;  // the stage's staged copies have landed
  const int tid = threadIdx.x, warpgroup = tid / 128;
  const int m0 = blockIdx.y * S::kBm, n0 = blockIdx.x * S::kBn;
  auto a_tile = [&](int stage) { return smem + stage * S::kStageFloats; };
  auto b_tile = [&](int stage) { return a_tile(stage) + S::kBm * S::kBk; };
  auto a_staging = [&](int stage) { return a_tile(stage) + S::kTileFloats; };
  auto b_staging = [&](int stage) { return a_staging(stage) + S::SourceA::kStagedFloats; };
  const int k_tiles = (a.extent_k + S::kBk - 1) / S::kBk;

  if (tid == 0) {
    for (int s = 0; s < S::kStages; ++s) {
      mbarrier_init(&full[s], 128);                   // every producer thread, + TMA bytes
      mbarrier_init(&empty[s], 128 * S::kConsumers);  // every consumer thread
      mbarrier_init(&landed[s], 1);                   // producer thread 0, + TMA bytes
    }
    fence_mbarrier_init();
  }
  __syncthreads();  // the last block-wide barrier: from here the two roles run apart

  if (warpgroup == S::kConsumers) {
    // Producer. Step kt waits until the consumers have emptied stage kt % S (its previous tile,
    // kt − S), has thread 0 start the K-major copies into it, transposes the MN-major tiles that
    // landed in its staging areas, and arrives on "full"; then thread 0 refills the staging
    // areas with tile kt + S, a round ahead of their transpose.
    const int ptid = tid - 128 * S::kConsumers;
    const typename S::SourceA source_a{&map_a, m0, k_begin};
    const typename S::SourceB source_b{&map_b, n0, k_begin};
    constexpr int kDirectBytes = S::SourceA::kDirectBytes + S::SourceB::kDirectBytes;
    constexpr int kStagedBytes = S::SourceA::kStagedBytes + S::SourceB::kStagedBytes;
    auto copy_staged = [&](int kt) {  // thread 0
      const int stage = kt % S::kStages;
      mbarrier_expect_bytes(&landed[stage], kStagedBytes);
      if (!KMajorA) source_a.copy(a_tile(stage), a_staging(stage), kt, &landed[stage]);
      if (!KMajorB) source_b.copy(b_tile(stage), b_staging(stage), kt, &landed[stage]);
      mbarrier_arrive(&landed[stage]);
    };
    if (kStagedBytes > 0 && ptid == 0)
      for (int kt = 0; kt < S::kStages && kt < k_tiles; ++kt) copy_staged(kt);
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int stage = kt % S::kStages, round = kt / S::kStages;
      if (kt >= S::kStages) mbarrier_wait(&empty[stage], (round - 1) & 1);
      if (kDirectBytes > 0 && ptid == 0) {
        mbarrier_expect_bytes(&full[stage], kDirectBytes);
        if (KMajorA) source_a.copy(a_tile(stage), a_staging(stage), kt, &full[stage]);
        if (KMajorB) source_b.copy(b_tile(stage), b_staging(stage), kt, &full[stage]);
      }
      if (kStagedBytes > 0) {
        mbarrier_wait(&landed[stage], round & 1);
        source_a.transpose(a_tile(stage), a_staging(stage), ptid);
        source_b.transpose(b_tile(stage), b_staging(stage), ptid);
        // This thread's writes, visible to wgmma, and its reads of the staging area ordered
        // before the TMA copy that refills it (both are the async proxy).
        fence_proxy_async();
        producer_barrier();  // every thread is done reading the staging areas
        if (ptid == 0 && kt + S::kStages < k_tiles) copy_staged(kt + S::kStages);
      }
      mbarrier_arrive(&full[stage]);
    }
  } else {
    // Consumers: wait for a full stage, multiply it, and once that batch has completed (one step
    // later: one batch stays in flight) hand its stage back.
    float acc[S::kWm / kWgmmaM][S::kBn / kWgmmaN][64] = {};
    for (auto& row : acc)
      for (auto& tile : row) fence_operands(tile);
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int stage = kt % S::kStages;
      mbarrier_wait(&full[stage], (kt / S::kStages) & 1);
      // The stage's second part, each consumer thread its share, while the tensor cores still run
      // the batch of tile kt − 1; published to wgmma (async proxy) and to the other consumers.
      // TUTORIAL: for each float x of the stage's A and B tiles, the same offset kPartFloats
      // further on gets tf32(x − trunc(x)).
      Arithmetic::prepare<S::kPartFloats, 128 * S::kConsumers>(a_tile(stage), tid);
      fence_proxy_async();
      consumer_barrier(128 * S::kConsumers);
      // TUTORIAL: the call below is step 9's K-tile products with three wgmma per k step and
      // wgmma tile (Arithmetic::mma), the remainders kPartFloats further on than the tiles:
      //   wgmma_m64n128k8_ss(acc[i][j], descriptor(lo of A, kk), descriptor(B, kk));
      //   wgmma_m64n128k8_ss(acc[i][j], descriptor(A, kk), descriptor(lo of B, kk));
      //   wgmma_m64n128k8_ss(acc[i][j], descriptor(A, kk), descriptor(B, kk));
      wgmma_k_tile<S::kBm, S::kBn, S::kBk, S::kWm, Arithmetic>(
          acc, a_tile(stage) + warpgroup * S::kWm * kPanelK, b_tile(stage), S::kPartFloats);
      wgmma_wait<1>();  // the batch of tile kt − 1 has completed
      if (kt > 0) mbarrier_arrive(&empty[(kt - 1) % S::kStages]);
    }
    wgmma_wait<0>();
    // Once every consumer is done reading the stages, the output tile is staged over them, then
    // stored a float4 at a time (whole 128-byte lines of C).
    consumer_barrier(128 * S::kConsumers);
#pragma unroll
    for (int i = 0; i < S::kWm / kWgmmaM; ++i) {
      for (auto& tile : acc[i]) fence_operands(tile);
      stage_warpgroup_tile<S::kBn, S::kOutputLd>(
          smem + (warpgroup * S::kWm + i * kWgmmaM) * S::kOutputLd, acc[i], tid % 128);
    }
    consumer_barrier(128 * S::kConsumers);
    store_staged_tile<S::kBm, S::kBn, S::kOutputLd, 128 * S::kConsumers>(c, smem, m0, n0, tid);
  }
}

// Runs the kernel with tile Tile on p (aligned operands), K split as `plan` says.
template <class Tile>
void launch_tile(const Problem& p, SplitK plan, cudaStream_t stream) {
  with_layout(p, [&](auto a_k_major, auto b_k_major) {
    constexpr bool KMajorA = decltype(a_k_major)::value, KMajorB = decltype(b_k_major)::value;
    using S = WsShape<Tile, KMajorA, KMajorB>;
    constexpr auto kernel = tf32x3_ws_kernel<Tile, KMajorA, KMajorB>;
    const Operand<KMajorA> a = operand_a<KMajorA>(p);
    const Operand<KMajorB> b = operand_b<KMajorB>(p);
    const CUtensorMap map_a = make_tile_map(a, S::kBm), map_b = make_tile_map(b, S::kBn);
    allow_dynamic_smem<kernel>(S::kSmemBytes);
    dim3 grid = tile_grid<S::kBm, S::kBn>(p);
    grid.z = plan.splits;
    run_split_k(p, plan, stream, [&](const Epilogue& c, int k_per_split) {
      kernel<<<grid, S::kThreads, S::kSmemBytes, stream>>>(a, b, c, k_per_split, map_a, map_b);
      CUDA_CHECK_LAUNCH();
    });
  });
}

}  // namespace

// The tile, with K split across blocks where it leaves multiprocessors idle, until the grid fills
// one wave (one block per multiprocessor: the slices never spill into a second, mostly idle wave).
void launch_tf32x3_ws(const Problem& p, cudaStream_t stream) {
  if (const char* why = wgmma_unavailable()) throw Error(std::string("gemm: ") + why);
  if (!operand_a<true>(p).vec4_ok || !operand_b<true>(p).vec4_ok)
    return launch_tf32x3(p, stream);  // TMA needs 16-byte aligned bases and strides
  const long tiles = tile_count<Tf32x3Tile::kBlockM, Tf32x3Tile::kBlockN>(p);
  launch_tile<Tf32x3Tile>(
      p, plan_split_k<kPanelK>(p, tiles, multiprocessor_count(), {.one_wave = true}), stream);
}

}  // namespace gemm::detail
