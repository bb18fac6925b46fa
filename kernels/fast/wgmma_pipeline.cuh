// The production warp-specialised wgmma pipeline, beside the ladder: step 9's structure (a TMA
// producer warpgroup fills shared stages, consumer warpgroups issue wgmma from them, full/empty
// mbarriers per stage) with what production adds to it (docs/NOTES.md, "9. wgmma_ws"):
//   - a ring of staging slots, separate from the stages, for the MN-major operands: as many as fit
//     beside the stages (up to 8), so that each TMA copy of an MN-major tile is issued that many
//     K tiles ahead of its transpose;
//   - misaligned operands (TMA needs a 16-byte aligned base and ld % 4 == 0) copied by the
//     producer's threads, cp.async or through registers, instead of handed to another kernel;
//   - on small grids, the K slices of a tile summed in the cluster's shared memory
//     (cluster_split_k.cuh) where the clusters fit at once, else through the workspace;
//   - an Arithmetic parameter: wgmma_ops::Tf32x1 (tf32_fast) or Tf32x3 (tf32x3_fast). Tf32x3's
//     remainders go to a ring of two parts of their own, not to a second part of every stage
//     (step 11): a batch reads one while the consumers prepare the next, so every stage is the
//     size of a TF32 one and more of them fit (docs/NOTES.md, "tf32x3_fast").
// The two roles are device functions over one output tile (ws_produce_tile, ws_consume_tile) that
// carry the barriers' phases in a running count of K tiles, so that the kernel
// (wgmma_pipeline_kernel.cuh, with its launchers) runs one tile a block and the persistent form
// (wgmma_pipeline_persistent.cuh) tile after tile. sm_90a only: include from files that
// kernels/CMakeLists.txt compiles for sm_90a.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#pragma once

#include <cstdint>

#include "kernels/fast/cluster_split_k.cuh"
#include "kernels/fast/phase_times.cuh"
#include "kernels/launchers.h"
#include "kernels/split_k.cuh"
#include "kernels/tma.cuh"
#include "kernels/wgmma.cuh"

namespace gemm::detail {

// A tile of the pipeline, named: struct MyTile { static constexpr int kBlockM = 256, kBlockN = 128,
// kStages = 4, kConsumers = 2; using Arithmetic = wgmma_ops::Tf32x1; }. kStages is the most stages
// wanted (fewer where the staging slots need the room); each consumer warpgroup owns
// kBlockM / kConsumers rows. WsPipeline<Tile> derives the rest; kBudgetFloats is the shared
// memory its stages, derived parts and staging slots may take (less for a kernel that keeps
// shared memory of its own beside the pipeline).
template <class Tile, int kBudgetFloats = kWsSmemBudgetFloats>
struct WsPipeline {
  using Arithmetic = typename Tile::Arithmetic;
  static constexpr int kBm = Tile::kBlockM, kBn = Tile::kBlockN, kBk = kPanelK;  // a TMA box: 32 k
  static constexpr int kConsumers = Tile::kConsumers;
  static constexpr int kWm = kBm / kConsumers;             // rows per consumer warpgroup
  static constexpr int kThreads = 128 * (kConsumers + 1);  // + one producer warpgroup
  // A stage: the A and B tiles as loaded (one part). Where the arithmetic derives a second part
  // from them (kPrepared), the consumers write it into a ring of two such parts: the one that the
  // batch of K tile kt − 1 reads, and the one they prepare for tile kt meanwhile.
  static constexpr int kPartFloats = (kBm + kBn) * kBk;
  static constexpr int kStageFloats = kPartFloats;
  static constexpr bool kPrepared = Arithmetic::kParts > 1;
  static constexpr int kDerivedFloats = kPrepared ? 2 * kPartFloats : 0;
  static_assert(kBm % kConsumers == 0 && kWm % kWgmmaM == 0,
                "each consumer owns a whole number of 64-row wgmma tiles");
  static_assert(kBn % kWgmmaN == 0, "the block's columns are split into 128-column wgmma tiles");
  static_assert(kBm <= 256 && kBn <= 256, "a TMA box spans at most 256 rows");

  // Shared memory for one layout (A, B K-major or not): stages, the derived parts, the staging
  // slots of the MN-major operands, then the mbarriers; 1 KB to align everything to the swizzle
  // atoms. A slot's next TMA copy waits for the transpose of the tile it holds, so each slot in
  // the ring hides one more K tile of the copy's latency. The most stages up to Tile::kStages
  // that leave room for two slots (at least 2 stages); then as many slots as fit beside those
  // stages, up to 8 (docs/NOTES.md, "9. wgmma_ws").
  template <bool KMajorA, bool KMajorB>
  struct For {
    static constexpr int kStagedFloats =
        ((KMajorA ? 0 : kBm) + (KMajorB ? 0 : kBn)) * kBk;  // per slot
    static constexpr bool fits(int slots, int stages) {
      return kBudgetFloats - kDerivedFloats - slots * kStagedFloats >= stages * kStageFloats;
    }
    static constexpr int stages_fitting(int stages) {
      return stages <= 2 || fits(2, stages) ? stages : stages_fitting(stages - 1);
    }
    static constexpr int kStages = stages_fitting(Tile::kStages);
    static constexpr int kSlotsFit =
        kStagedFloats == 0
            ? 0
            : (kBudgetFloats - kDerivedFloats - kStages * kStageFloats) / kStagedFloats;
    static constexpr int kSlots = kSlotsFit < 8 ? kSlotsFit : 8;
    static constexpr int kRing = kSlots > 0 ? kSlots : 1;  // slot of tile kt: kt % kRing
    static constexpr int kBarriers = 2 * kStages + kSlots;
    static constexpr int kPipelineFloats =
        kStages * kStageFloats + kDerivedFloats + kSlots * kStagedFloats;
    static constexpr int kSmemBytes = kPipelineFloats * int(sizeof(float)) + 8 * kBarriers + 1024;
    // The output tile is staged over the stages and slots once the K loop is done.
    static constexpr int kOutputLd = kBn + 8;  // ≡ 8 (mod 32): conflict-free float2 writes
    static_assert(kBm * kOutputLd <= kPipelineFloats,
                  "the staged output tile must fit in the pipeline's shared memory");
    static_assert(kStagedFloats == 0 || kSlots >= 1, "an MN-major operand needs a staging slot");
    static_assert(kStages <= Tile::kStages, "no more stages than the tile asks for");
    static_assert(kSmemBytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
  };
};

// Brings `map` (a __grid_constant__ kernel parameter) into the tensor-map cache ahead of its
// first copy. It reads only the kernel's parameters, so it may run before await_prior_kernels().
__device__ __forceinline__ void prefetch_tile_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// How the producer fills one operand's BX×32 swizzled tiles, per operand and layout:
//   K-major, aligned: TMA straight into the tile (map).
//   MN-major, aligned: TMA into a staging slot as stored (map), then the producer's 128
//     threads transpose it into the tile (SwizzledTileLoader, reading the slot).
//   misaligned (TMA needs a 16-byte aligned base and ld % 4 == 0): the threads copy from global
//     memory, by cp.async (K-major) or transposing through registers (MN-major).
template <int BX, bool KMajor>
struct ProducerOperand {
  static constexpr int kBk = kPanelK, kTileBytes = BX * kBk * int(sizeof(float));
  using Loader = SwizzledTileLoader<BX, kBk, 128, KMajor>;
  const CUtensorMap* map;  // null: misaligned
  int x0, k_begin;         // tile origin; first k of this block's split-K slice

  __device__ __forceinline__ bool staged() const { return !KMajor && map; }
  __device__ __forceinline__ int direct_bytes() const { return KMajor && map ? kTileBytes : 0; }
  __device__ __forceinline__ int staged_bytes() const { return staged() ? kTileBytes : 0; }
  // Thread 0: start the TMA copy of K tile kt into `tile` (direct) or `slot` (staged).
  __device__ __forceinline__ void copy_direct(float* tile, int kt, uint64_t* bar) const {
    if (KMajor && map) tma_load_tile(tile, map, k_begin + kt * kBk, x0, bar);
  }
  __device__ __forceinline__ void copy_staged(float* slot, int kt, uint64_t* bar) const {
    if (staged()) tma_load_tile(slot, map, x0, k_begin + kt * kBk, bar);
  }
  // Every thread: complete `tile` (K tile kt) from the staging slot, or for a misaligned
  // operand from global memory (unpipelined: that path is for correctness, not speed).
  __device__ __forceinline__ void store(float* tile, const float* slot, const Operand<KMajor>& op,
                                        int kt, int ptid) const {
    if constexpr (KMajor) {
      if (!map) {  // cp.async, waited for by the caller
        Loader loader;
        loader.fetch(op, x0, kt * kBk, ptid);
        loader.store(tile, op, x0, ptid);
      }
    } else if (map) {  // the slot as an MN-major BX×32 operand
      Loader::copy(tile, Operand<false>{slot, BX, BX, kBk, true}, 0, 0, ptid);
    } else {
      Loader::copy(tile, op, x0, kt * kBk, ptid);
    }
  }
};

// The epilogue of a warp-specialised kernel whose first NT threads (the consumers) staged its BM×BN
// output tile at `tile` (row stride LD): they store it a float4 at a time, coalesced, or sum it
// across the cluster's K slices first (kClusterSplit; every thread joins the cluster barriers).
// Only the threads that wrote the tile read it, after their own barrier. (With the producer
// reading too, after __syncthreads, compute-sanitizer's racecheck reports hazards that are not
// there: docs/NOTES.md, "Racecheck and named barriers".)
template <int BM, int BN, int LD, int NT, bool kClusterSplit>
__device__ __forceinline__ void store_consumers_tile(const Epilogue& c, const float* tile, int m0,
                                                     int n0, int tid) {
  if (tid < NT) consumer_barrier(NT);
  if constexpr (kClusterSplit) {
    cluster_split_k_store<BM, BN, LD, NT>(c, tile, m0, n0, tid);
  } else if (tid < NT) {
    store_staged_tile<BM, BN, LD, NT>(c, tile, m0, n0, tid);
    GEMM_PHASE(Stored);
  }
}

// A block's pipeline in its dynamic shared memory (1 KB aligned for the swizzle atoms): the stages,
// the derived parts (two, where kPrepared), the staging slots of the MN-major operands, then the
// mbarriers: "full" and "empty" per stage, "staged" per slot (its TMA copies have landed).
template <class Cfg, bool KMajorA, bool KMajorB>
struct WsPipelineSmem {
  using Layout = typename Cfg::template For<KMajorA, KMajorB>;
  float* smem;
  float* derived;
  float* staging;
  uint64_t* full;
  uint64_t* empty;
  uint64_t* staged;

  __device__ __forceinline__ explicit WsPipelineSmem(float* smem_raw)
      : smem(smem_raw + ((1024 - smem_address(smem_raw) % 1024) % 1024) / sizeof(float)),
        derived(smem + Layout::kStages * Cfg::kStageFloats),
        staging(derived + Cfg::kDerivedFloats),
        full(reinterpret_cast<uint64_t*>(staging + Layout::kSlots * Layout::kStagedFloats)),
        empty(full + Layout::kStages),
        staged(empty + Layout::kStages) {}
  // With the barriers (Layout::kBarriers of them) at `barriers` instead of after the staging
  // slots: for a block that runs tiles of several layouts over the same memory, each layout's
  // barriers apart, past the largest layout's pipeline.
  __device__ __forceinline__ WsPipelineSmem(float* smem_raw, uint64_t* barriers)
      : smem(aligned(smem_raw)),
        derived(smem + Layout::kStages * Cfg::kStageFloats),
        staging(derived + Cfg::kDerivedFloats),
        full(barriers),
        empty(full + Layout::kStages),
        staged(empty + Layout::kStages) {}
  // The pipeline's start in dynamic shared memory smem_raw: its first 1 KB boundary.
  static __device__ __forceinline__ float* aligned(float* smem_raw) {
    return smem_raw + ((1024 - smem_address(smem_raw) % 1024) % 1024) / sizeof(float);
  }
  __device__ __forceinline__ float* a_tile(int stage) const {
    return smem + stage * Cfg::kStageFloats;
  }
  __device__ __forceinline__ float* b_tile(int stage) const {
    return a_tile(stage) + Cfg::kBm * Cfg::kBk;
  }
  __device__ __forceinline__ float* a_slot(int slot) const {
    return staging + slot * Layout::kStagedFloats;
  }
  __device__ __forceinline__ float* b_slot(int slot) const {
    return a_slot(slot) + (KMajorA ? 0 : Cfg::kBm * Cfg::kBk);
  }
  // Thread 0; the caller publishes the barriers to the block (__syncthreads).
  __device__ __forceinline__ void init_barriers() const {
    for (int s = 0; s < Layout::kStages; ++s) {
      mbarrier_init(&full[s], 128);                     // every producer thread, + TMA bytes
      mbarrier_init(&empty[s], 128 * Cfg::kConsumers);  // every consumer thread
    }
    for (int s = 0; s < Layout::kSlots; ++s) mbarrier_init(&staged[s], 1);  // thread 0, + TMA bytes
    fence_mbarrier_init();
  }
};

// The producer warpgroup's part of one output tile (ptid: its thread, 0..127), K tiles
// 0..k_tiles − 1 of the operands pa and pb describe. `issued` counts the K tiles this block's
// pipeline ran before this tile (0 for its first), so that a block can run tile after tile with
// every barrier's phase carried over: K tile kt is the pipeline's g = issued + kt, in stage
// g % kStages and slot g % kRing. Step g waits until the consumers have emptied its stage (its
// previous tile, g − S), has thread 0 start the direct TMA copies into it, transposes the staged
// tiles (copied kSlots steps earlier) into it, and arrives on its "full" barrier; then thread 0
// refills the slot just read with tile kt + kSlots.
template <class Cfg, bool KMajorA, bool KMajorB>
__device__ __forceinline__ void ws_produce_tile(const WsPipelineSmem<Cfg, KMajorA, KMajorB>& s,
                                                const ProducerOperand<Cfg::kBm, KMajorA>& pa,
                                                const ProducerOperand<Cfg::kBn, KMajorB>& pb,
                                                const Operand<KMajorA>& a,
                                                const Operand<KMajorB>& b, int k_tiles, int issued,
                                                int ptid) {
  using Layout = typename Cfg::template For<KMajorA, KMajorB>;
  const int direct_bytes = pa.direct_bytes() + pb.direct_bytes();
  const int staged_bytes = pa.staged_bytes() + pb.staged_bytes();
  const bool uses_cp_async = (KMajorA && !pa.map) || (KMajorB && !pb.map);
  auto stage_copies = [&](int kt) {  // thread 0
    const int slot = (issued + kt) % Layout::kRing;
    uint64_t* bar = &s.staged[slot];
    mbarrier_expect_bytes(bar, staged_bytes);
    pa.copy_staged(s.a_slot(slot), kt, bar);
    pb.copy_staged(s.b_slot(slot), kt, bar);
    mbarrier_arrive(bar);
  };
  if (ptid == 0 && staged_bytes > 0)
    for (int kt = 0; kt < Layout::kSlots && kt < k_tiles; ++kt) stage_copies(kt);
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int g = issued + kt;
    const int stage = g % Layout::kStages;
    if (g >= Layout::kStages) mbarrier_wait(&s.empty[stage], (g / Layout::kStages - 1) & 1);
    if (ptid == 0 && direct_bytes > 0) {
      mbarrier_expect_bytes(&s.full[stage], direct_bytes);
      pa.copy_direct(s.a_tile(stage), kt, &s.full[stage]);
      pb.copy_direct(s.b_tile(stage), kt, &s.full[stage]);
    }
    const int slot = g % Layout::kRing;
    if (staged_bytes > 0) mbarrier_wait(&s.staged[slot], (g / Layout::kRing) & 1);
    pa.store(s.a_tile(stage), s.a_slot(slot), a, kt, ptid);
    pb.store(s.b_tile(stage), s.b_slot(slot), b, kt, ptid);
    if (uses_cp_async) {
      cp_async_commit();
      cp_async_wait<0>();
    }
    // This thread's writes, visible to wgmma, and its reads of the slot ordered before the
    // TMA copy that refills it (both are the async proxy).
    fence_proxy_async();
    if (staged_bytes > 0) {
      producer_barrier();  // every thread is done reading the slot
      if (ptid == 0 && kt + Layout::kSlots < k_tiles) stage_copies(kt + Layout::kSlots);
    }
    mbarrier_arrive(&s.full[stage]);
  }
}

// The consumers' accumulators staged over the pipeline's shared memory as a BM×BN tile of row
// stride kOutputLd, for store_consumers_tile. Every consumer must be done reading the stages.
template <class Cfg, bool KMajorA, bool KMajorB, class Acc>
__device__ __forceinline__ void ws_stage_output(const WsPipelineSmem<Cfg, KMajorA, KMajorB>& s,
                                                Acc& acc, int tid) {
  using Layout = typename Cfg::template For<KMajorA, KMajorB>;
  const int warpgroup = tid / 128;
#pragma unroll
  for (int i = 0; i < Cfg::kWm / kWgmmaM; ++i) {
    for (auto& tile : acc[i]) fence_operands(tile);
    stage_warpgroup_tile<Cfg::kBn, Layout::kOutputLd>(
        s.smem + (warpgroup * Cfg::kWm + i * kWgmmaM) * Layout::kOutputLd, acc[i], tid % 128);
  }
}

// The consumer warpgroups' part of one output tile: wait for a full stage, multiply it, and once
// that batch has completed (one step later: one batch stays in flight) hand its stage back; then,
// once the last batch has completed and every consumer is done reading the stages, stage the
// accumulators over the pipeline's shared memory as a BM×BN tile of row stride kOutputLd, for
// store_consumers_tile. `issued` as for ws_produce_tile. The last K tile's stage is not handed
// back: where the block runs another tile, the caller arrives on its "empty" barrier once the
// staged output is stored.
template <class Cfg, bool KMajorA, bool KMajorB>
__device__ __forceinline__ void ws_consume_tile(const WsPipelineSmem<Cfg, KMajorA, KMajorB>& s,
                                                int k_tiles, int issued, int tid) {
  using Layout = typename Cfg::template For<KMajorA, KMajorB>;
  float acc[Cfg::kWm / kWgmmaM][Cfg::kBn / kWgmmaN][64] = {};
  for (auto& row : acc)
    for (auto& tile : row) fence_operands(tile);
  const int warpgroup = tid / 128;
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int g = issued + kt;
    const int stage = g % Layout::kStages;
    mbarrier_wait(&s.full[stage], (g / Layout::kStages) & 1);
    if (kt == 0) GEMM_PHASE(FirstStage);
    float* lo = s.derived + (g % 2) * Cfg::kPartFloats;  // tile g's derived part, if any
    if constexpr (Cfg::kPrepared) {
      // Its ring slot was last read by both consumers' batches of tile g − 2: every consumer
      // thread arrived on that stage's "empty" barrier once its batch completed (for a batch of
      // the block's previous output tile, the wait below for the last batch). Then each consumer
      // thread writes its share, while the tensor cores still run the batch of tile g − 1,
      // published to wgmma (async proxy) and to the other consumers.
      if (kt >= 2)
        mbarrier_wait(&s.empty[(g - 2) % Layout::kStages], ((g - 2) / Layout::kStages) & 1);
      Cfg::Arithmetic::template prepare<Cfg::kPartFloats, 128 * Cfg::kConsumers>(s.a_tile(stage),
                                                                                 lo, tid);
      fence_proxy_async();
      consumer_barrier(128 * Cfg::kConsumers);
    }
    wgmma_k_tile<Cfg::kBm, Cfg::kBn, Cfg::kBk, Cfg::kWm, typename Cfg::Arithmetic>(
        acc, s.a_tile(stage) + warpgroup * Cfg::kWm * kPanelK, s.b_tile(stage),
        int(lo - s.a_tile(stage)));
    wgmma_wait<1>();  // the batch of tile g − 1 has completed
    if (kt > 0) mbarrier_arrive(&s.empty[(g - 1) % Layout::kStages]);
  }
  wgmma_wait<0>();
  GEMM_PHASE(KLoop);
  // Once every consumer is done reading the stages, the output tile is staged over them.
  consumer_barrier(128 * Cfg::kConsumers);
  ws_stage_output<Cfg>(s, acc, tid);
  GEMM_PHASE(Staged);
}

}  // namespace gemm::detail
