// Step 9 — warp specialisation with TMA copies. In step 8 every warp both copies and multiplies,
// and one block barrier per K tile holds all of them to the pace of the slowest copy. Here one
// producer warpgroup only fills shared memory and the consumer warpgroups only issue wgmma; they
// hand stages to each other through mbarriers per stage ("full": the tile is in place; "empty":
// every consumer has finished reading it), so neither side waits for more than the one stage it
// needs. Global reads are the TMA engine's, one instruction per tile from one thread: a K-major
// tile lands already 128-byte swizzled, as wgmma reads it; an MN-major one lands as stored in the
// stage's staging area (a third barrier, "landed"), one round of stages ahead, and the producer's
// threads transpose it into the tile.
// Change from 08, five changes, each marked "Change N" where it is made below:
//   1. Warp specialisation. The block is consumer warpgroups plus one producer warpgroup
//      (kThreads = 128 · (kConsumers + 1)); after one block barrier at the start they run
//      separate loops, the producer's copying and the consumers' multiplying (step 8's K loop cut
//      in two).
//   2. mbarriers per stage in place of the block barrier: "full" (the producer's threads have
//      arrived and the stage's TMA bytes have landed), "empty" (every consumer thread has
//      finished reading it), and for MN-major tiles "landed" (their staging area is filled).
//      Each side waits only for the one stage it needs, at a parity that alternates per round.
//   3. TMA copies in place of cp.async and register transposes: one instruction from one thread
//      per tile (tma.cuh's TmaTileSource, on tensor maps the launcher makes). A K-major tile lands
//      swizzled as wgmma reads it; an MN-major one lands as stored in the stage's staging area,
//      one round of stages ahead, and the producer's 128 threads transpose it into the tile.
//   4. Consumers of 128 rows: two consumers share the 256×128 tile (64 rows each of the small
//      128×128 one), each issuing kWm / 64 wgmma row slabs per k step (wgmma_k_tile).
//   5. The output tile staged over the stages' shared memory, then stored a float4 at a time
//      (whole 128-byte lines of C), where step 8's threads store their fragments straight to C.
// And in the launcher: TMA needs 16-byte-aligned bases and strides, so a problem that has not got
// them goes to step 8 (one line), and K is split for one wave (one block per multiprocessor).
// Production (fast/wgmma_pipeline.cuh) adds to this: a ring of staging slots sized apart from the
// stages (more copies in flight in less memory), misaligned operands copied by the producer's
// threads, and split-K summed in the cluster's shared memory instead of the workspace.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
//
// Run it (a build in build/, scripts/train.sh makes one):
//   build/apps/gemm_bench/gemm_bench --variants wgmma,wgmma_ws --shapes 4096
//   scripts/train.sh --gemm wgmma_ws --epochs 2
#include <string>

#include "kernels/launchers.h"
#include "kernels/split_k.cuh"
#include "kernels/tma.cuh"
#include "kernels/wgmma.cuh"

namespace gemm::detail {
namespace {

// Measured on the H200 (docs/NOTES.md, "9. wgmma_ws"): two consumers of 128×128 on a 256×128
// tile for large grids; 128×128 (two consumers of 64×128) with split-K when the large tile leaves
// multiprocessors idle. kStages is the most stages wanted; fewer where the staging areas need
// the room.
struct LargeTile {
  static constexpr int kBlockM = 256, kBlockN = 128, kStages = 4, kConsumers = 2;
};
struct SmallTile {
  static constexpr int kBlockM = 128, kBlockN = 128, kStages = 4, kConsumers = 2;
};

// Tile's derived sizes for one layout. A stage: the swizzled A and B tiles wgmma reads, then the
// staging areas of the MN-major operands; after the stages, three mbarriers per stage. + 1 KB to
// align the tiles to the 1024-byte swizzle atoms.
template <class Tile, bool KMajorA, bool KMajorB>
struct WsShape {
  static constexpr int kBm = Tile::kBlockM, kBn = Tile::kBlockN, kBk = kPanelK;  // a TMA box: 32 k
  static constexpr int kConsumers = Tile::kConsumers;
  static constexpr int kWm = kBm / kConsumers;             // Change 4: rows per consumer
  static constexpr int kThreads = 128 * (kConsumers + 1);  // Change 1: + one producer warpgroup
  using SourceA = TmaTileSource<kBm, KMajorA>;             // Change 3: the TMA copies
  using SourceB = TmaTileSource<kBn, KMajorB>;
  static constexpr int kTileFloats = (kBm + kBn) * kBk;
  static constexpr int kStageFloats = kTileFloats + SourceA::kStagedFloats + SourceB::kStagedFloats;
  static constexpr int kStagesFit = kWsSmemBudgetFloats / kStageFloats;
  static constexpr int kStages = kStagesFit < Tile::kStages ? kStagesFit : Tile::kStages;
  static constexpr int kSmemBytes =
      kStages * kStageFloats * int(sizeof(float)) + 3 * kStages * int(sizeof(uint64_t)) + 1024;
  static_assert(kBm % kConsumers == 0 && kWm % kWgmmaM == 0,
                "each consumer owns a whole number of 64-row wgmma tiles");
  static_assert(kBn % kWgmmaN == 0, "the block's columns are split into 128-column wgmma tiles");
  static_assert(kBm <= 256 && kBn <= 256, "a TMA box spans at most 256 rows");
  static constexpr int kOutputLd = kBn + 8;  // Change 5: ≡ 8 (mod 32), conflict-free float2 writes
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
    wgmma_ws_kernel(Operand<KMajorA> a, Operand<KMajorB> b, Epilogue c, int k_per_split,
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

  // Change 2: three mbarriers per stage, in place of step 8's __syncthreads per K tile.
  if (tid == 0) {
    for (int s = 0; s < S::kStages; ++s) {
      mbarrier_init(&full[s], 128);                   // every producer thread, + TMA bytes
      mbarrier_init(&empty[s], 128 * S::kConsumers);  // every consumer thread
      mbarrier_init(&landed[s], 1);                   // producer thread 0, + TMA bytes
    }
    fence_mbarrier_init();
  }
  __syncthreads();  // the last block-wide barrier: from here the two roles run apart

  // Change 1: the roles. The last warpgroup produces, the others consume.
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
    // Change 3: TMA. TUTORIAL: a source's copy() is one instruction from thread 0,
    //   tma_load_tile(tile, &map_a, k_begin + kt * 32, m0, &full[stage]);      // K-major A
    //   tma_load_tile(staging, &map_b, n0, k_begin + kt * 32, &landed[stage]);  // MN-major B
    // and its transpose() every producer thread's share of
    //   for each (x, k) of the tile: tile[swizzled<kBn>(x, k)] = staging[k * kBn + x];
    // mbarrier_expect_bytes tells the stage's barrier how many bytes the copies will bring.
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
      // Change 2: the stage's previous tile read by every consumer; its copies counted on "full".
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
    // later: one batch stays in flight, as in step 8) hand its stage back.
    // Change 4: kWm rows, kWm / 64 wgmma row slabs.
    float acc[S::kWm / kWgmmaM][S::kBn / kWgmmaN][64] = {};
    for (auto& row : acc)
      for (auto& tile : row) fence_operands(tile);
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int stage = kt % S::kStages;
      mbarrier_wait(&full[stage], (kt / S::kStages) & 1);  // Change 2: in place of __syncthreads
      // TUTORIAL: the call below is step 8's K-tile products (08_wgmma.cu) for each of this
      // consumer's row slabs i:
      //   wgmma_fence();
      //   for (int kk = 0; kk < kBk; kk += 8)
      //     for (int i = 0; i < kWm / 64; ++i)
      //       for (int j = 0; j < kBn / 128; ++j)
      //         wgmma_m64n128k8_ss(acc[i][j], descriptor(A rows 64i, kk), descriptor(B 128j, kk));
      //   wgmma_commit();
      wgmma_k_tile<S::kBm, S::kBn, S::kBk, S::kWm>(
          acc, a_tile(stage) + warpgroup * S::kWm * kPanelK, b_tile(stage));
      wgmma_wait<1>();  // the batch of tile kt − 1 has completed
      if (kt > 0) mbarrier_arrive(&empty[(kt - 1) % S::kStages]);  // Change 2: stage handed back
    }
    wgmma_wait<0>();
    // Change 5: once every consumer is done reading the stages, the output tile is staged over
    // them, then stored a float4 at a time (whole 128-byte lines of C).
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
    constexpr auto kernel = wgmma_ws_kernel<Tile, KMajorA, KMajorB>;
    const Operand<KMajorA> a = operand_a<KMajorA>(p);
    const Operand<KMajorB> b = operand_b<KMajorB>(p);
    // Change 3: the tensor maps that describe each operand's tiles to the copy engine.
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

// The large tile where it gives every multiprocessor a block; otherwise the small one, with K
// split across blocks until the grid fills one wave (one block per multiprocessor: the slices
// never spill into a second, mostly idle wave).
void launch_wgmma_ws(const Problem& p, cudaStream_t stream) {
  if (const char* why = wgmma_unavailable()) throw Error(std::string("gemm: ") + why);
  // Change 3, in the launcher: TMA needs 16-byte aligned bases and strides.
  if (!operand_a<true>(p).vec4_ok || !operand_b<true>(p).vec4_ok) return launch_wgmma(p, stream);
  const int sms = multiprocessor_count();
  if (tile_count<LargeTile::kBlockM, LargeTile::kBlockN>(p) >= sms)
    return launch_tile<LargeTile>(p, SplitK{1, p.k}, stream);
  const long tiles = tile_count<SmallTile::kBlockM, SmallTile::kBlockN>(p);
  launch_tile<SmallTile>(p, plan_split_k<kPanelK>(p, tiles, sms, {.one_wave = true}), stream);
}

}  // namespace gemm::detail
