// Step 6 — warp tiling. The block tile is split into warp tiles and each warp tile into thread
// tiles, so the 32 threads of a warp read one compact patch of shared memory (fewer distinct
// addresses per fragment read, better reuse in the L1/shared pipe) and the hierarchy
// block tile → warp tile → thread tile is explicit in the code, as in CUTLASS.
// Change from 05: warp/thread index mapping; BK 8 → 16 in 3–4 stages (dynamic shared memory),
// so each barrier covers twice the work; every cp.async 16 bytes (cp_async_tile_native): a
// K-contiguous operand (A with op N, B with op T) is copied as stored and, in the large tile,
// transposed in shared memory (SmemTile, KcTiles), where possible one K tile ahead of the compute
// so that the K loop keeps one barrier per tile; and smaller block tiles with split-K
// (split_k.cuh) that the launcher picks when the 128×128 grid would leave multiprocessors idle (the
// MLP's M = 256 shapes): 64×64, or 64×32 for an output at most 32 wide or in place of short K
// slices; there TN and NT read each step's fragment during the previous step's FMAs
// (pipelined_k_loop_fragments).
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#include "kernels/launchers.h"
#include "kernels/pipeline.cuh"
#include "kernels/split_k.cuh"
#include "kernels/thread_tile.cuh"

namespace gemm::detail {
namespace {

// How the tiles of a K-contiguous operand (A with op N, B with op T) reach the thread tile; they
// are always copied as stored, X-major, 16 bytes per cp.async (SmemTile).
enum class KcTiles {
  ReadXMajor,      // read as copied, a float4 along k per row: more live registers
  Transpose,       // transposed into one K-major tile per K tile, then a second barrier
  TransposeAhead,  // transposed one K tile ahead into two K-major tiles: one barrier, Stages ≥ 3
};

// One operand's shared tiles. An X-contiguous operand is copied straight into a K-major tile,
// tile[k·kLds + x] (16-byte cp.async along x), which the thread tile reads a float4 of 4
// neighbouring x at a time. A K-contiguous one is copied as it is stored, X-major
// staged[x·kStagedLds + k], again 16 bytes per cp.async; then the thread tile reads it as it is
// or from its transposed K-major tile(s), as kKc says (measured in docs/KERNELS.md). A staged row
// stride of an odd number of float4s (≡ 4 mod 8 floats) puts the rows that 8 neighbouring
// threads read in 8 different 16-byte bank groups; K-major rows keep 05's 4 floats of padding.
template <int BK, int BX, bool KC, KcTiles kKc>
struct SmemTile {
  static constexpr int kKMajorLds = BX + 4;
  static constexpr int kStagedLds = BK + 4;                                    // KC only
  static constexpr int kStageFloats = KC ? BX * kStagedLds : BK * kKMajorLds;  // per stage
  static constexpr bool kTransposed = KC && kKc != KcTiles::ReadXMajor;
  static constexpr int kTransposedTiles = kKc == KcTiles::TransposeAhead ? 2 : 1;
  static constexpr int kTransposedTileFloats = BK * kKMajorLds;
  static constexpr int kTransposedFloats =
      kTransposed ? kTransposedTiles * kTransposedTileFloats : 0;
  // What the thread tile reads.
  static constexpr bool kReadStaged = KC && !kTransposed;
  static constexpr TileLayout kLayout = kReadStaged ? TileLayout::XMajor : TileLayout::KMajor;
  static constexpr int kLds = kReadStaged ? kStagedLds : kKMajorLds;
  static_assert(kStagedLds % 8 == 4,
                "an X-major row stride must be an odd number of float4s for conflict-free reads");
};

// Transposes the X-major BX×BK tile `staged` into the K-major `tile` (SmemTile strides): each
// thread reads a float4 of one row along k and writes its 4 values down the K-major columns.
// Neighbouring threads take neighbouring x: conflict-free reads (odd float4 stride) and writes
// (32 consecutive floats).
template <class Tile, int BK, int BX, int NT>
__device__ __forceinline__ void transpose_staged(float* tile, const float* staged, int tid) {
  for_each_strided<BX * BK / 4, NT>(tid, [&](int i) {
    const int x = i % BX, k = (i / BX) * 4;
    const float4 v = *reinterpret_cast<const float4*>(&staged[x * Tile::kStagedLds + k]);
    tile[(k + 0) * Tile::kKMajorLds + x] = v.x;
    tile[(k + 1) * Tile::kKMajorLds + x] = v.y;
    tile[(k + 2) * Tile::kKMajorLds + x] = v.z;
    tile[(k + 3) * Tile::kKMajorLds + x] = v.w;
  });
}

template <int BM_, int BN_, int BK_, int WM_, int WN_, int TM_, int TN_, int Stages_, KcTiles Kc_,
          bool PipelineFragments_ = false>
struct WarpTileConfig {
  static constexpr int kBm = BM_, kBn = BN_, kBk = BK_;  // block tile
  static constexpr int kWm = WM_, kWn = WN_;             // warp tile
  static constexpr int kTm = TM_, kTn = TN_;             // thread tile
  static constexpr int kStages = Stages_;
  static constexpr KcTiles kKc = Kc_;
  static constexpr bool kPipelineFragments = PipelineFragments_;  // see For::kFragmentLoop
  static_assert(kKc != KcTiles::TransposeAhead || kStages >= 3,
                "transposing one K tile ahead needs three stages (pipelined_k_loop_ahead)");
  static_assert(!kPipelineFragments || kStages >= 3,
                "the fragment loop keeps kStages − 1 tiles in flight in kStages − 1 buffers");
  static constexpr int kWarpsM = kBm / kWm, kWarpsN = kBn / kWn;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  // Blocks per multiprocessor the registers must leave room for (__launch_bounds__): thread tiles
  // up to 8×8 get at most 128 registers, or the unrolled tile copies' hoisted addresses would
  // take the registers of a second block (2 × 256 or 4 × 128 threads).
  static constexpr int kMinBlocks = kTm * kTn <= 64 ? 65536 / (kThreads * 128) : 1;
  static constexpr int kLanesM = kWm / kTm, kLanesN = kWn / kTn;  // thread grid inside a warp
  static_assert(kBm % kWm == 0 && kBn % kWn == 0, "warp tiles must tile the block tile");
  static_assert(kWm % kTm == 0 && kWn % kTn == 0, "thread tiles must tile the warp tile");
  static_assert(kLanesM * kLanesN == 32, "a warp tile is covered by exactly 32 thread tiles");
  static_assert(kBk % 4 == 0, "K tiles are copied in 16-byte chunks");

  // What depends on the layout (A, B K-contiguous or not): the shared tiles, the K loop, and the
  // thread tile that reads them. Per stage A's tile then B's; after the stages, the transposed
  // tiles. A thread's float4 groups (K-major) sit 4·kLanesM rows and 4·kLanesN columns apart in
  // its warp tile; its single rows or columns (X-major) kLanesM and kLanesN apart.
  template <bool KCA, bool KCB>
  struct For {
    using TileA = SmemTile<kBk, kBm, KCA, kKc>;
    using TileB = SmemTile<kBk, kBn, KCB, kKc>;
    static constexpr bool kTransposes = TileA::kTransposed || TileB::kTransposed;
    // Tiles read as copied, both in one layout (TN, NT), pipeline their fragment reads
    // (pipelined_k_loop_fragments). With one K-major and one X-major (NN) the 2-k fragment reads
    // cost more than the pipelining hides (docs/KERNELS.md). That loop refills a buffer one
    // step earlier, so one buffer fewer keeps as many tiles in flight, and frees shared memory.
    static constexpr bool kFragmentLoop =
        kPipelineFragments && !kTransposes && TileA::kLayout == TileB::kLayout;
    static constexpr int kBuffers = kFragmentLoop ? kStages - 1 : kStages;
    static constexpr int kStageFloats = TileA::kStageFloats + TileB::kStageFloats;
    static constexpr int kSmemBytes =
        (kBuffers * kStageFloats + TileA::kTransposedFloats + TileB::kTransposedFloats) *
        int(sizeof(float));
    static_assert(kSmemBytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
    using Tile = ThreadTile<kTm, kTn, 4 * kLanesM, 4 * kLanesN, TileA::kLayout, TileB::kLayout>;
  };
};

// The fastest on the H200 of the shapes scripts/tune/tune_tiles.sh sweeps (docs/KERNELS.md,
// docs/results/tuning_h200.txt). Large: 4 stages of BK = 16, warp tiles of 64×32, K-contiguous
// tiles transposed one K tile ahead. Small: 3 stages of BK = 16 (2 buffers where the fragment
// reads are pipelined), the X-major reads, K split for 3 blocks per multiprocessor in at most 8
// slices (one cluster on sm_90). Narrow: for an output at most 32 wide (the MLP's output layer,
// N = 10), where a 64-wide tile would compute mostly columns that are not there. Fine: the same
// tile with its fragment reads pipelined, in place of short slices of the small tile
// (finer_tile_beats_split); at N = 10 the pipelining loses (the sweep's pk against sk).
using LargeTile = WarpTileConfig<128, 128, 16, 64, 32, 8, 8, 4, KcTiles::TransposeAhead>;
using SmallTile = WarpTileConfig<64, 64, 16, 32, 32, 8, 4, 3, KcTiles::ReadXMajor, true>;
using NarrowTile = WarpTileConfig<64, 32, 16, 32, 16, 4, 4, 3, KcTiles::ReadXMajor>;
using FineTile = WarpTileConfig<64, 32, 16, 32, 16, 4, 4, 3, KcTiles::ReadXMajor, true>;

// kClusterSplit: the K slices of a tile form a cluster and sum their partials in shared memory
// (split_k.cuh); otherwise each slice writes its own (the workspace, or C when unsplit).
template <class Cfg, bool KCA, bool KCB, bool kClusterSplit>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    warptile_kernel(Operand<KCA> a, Operand<KCB> b, Epilogue c, int k_per_split) {
  using L = typename Cfg::template For<KCA, KCB>;
  using Tile = typename L::Tile;
  enter_k_slice(a, b, c, k_per_split, !kClusterSplit);
  extern __shared__ __align__(16) float smem[];  // see Cfg::For
  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int m0 = blockIdx.y * Cfg::kBm, n0 = blockIdx.x * Cfg::kBn;
  // Warp tile origin inside the block tile, then thread tile origin inside the warp tile.
  const int warp_row = (warp / Cfg::kWarpsN) * Cfg::kWm,
            warp_col = (warp % Cfg::kWarpsN) * Cfg::kWn;
  const int row0 = warp_row + (lane / Cfg::kLanesN) * Tile::kLaneRowStep;
  const int col0 = warp_col + (lane % Cfg::kLanesN) * Tile::kLaneColStep;

  Tile tile;
  using TileA = typename L::TileA;
  using TileB = typename L::TileB;
  auto a_stage = [&](int stage) { return smem + stage * L::kStageFloats; };
  auto b_stage = [&](int stage) { return a_stage(stage) + TileA::kStageFloats; };
  // The K-major tile that K tile kt is transposed into (one of two when transposed ahead).
  float* const a_transposed = smem + L::kBuffers * L::kStageFloats;
  float* const b_transposed = a_transposed + TileA::kTransposedFloats;
  auto a_kmajor = [&](int kt) {
    return a_transposed + kt % TileA::kTransposedTiles * TileA::kTransposedTileFloats;
  };
  auto b_kmajor = [&](int kt) {
    return b_transposed + kt % TileB::kTransposedTiles * TileB::kTransposedTileFloats;
  };
  auto load = [&](int stage, int kt) {
    cp_async_tile_native<Cfg::kBk, Cfg::kBm, KCA ? TileA::kStagedLds : TileA::kLds, Cfg::kThreads>(
        a_stage(stage), a, m0, kt * Cfg::kBk, tid);
    cp_async_tile_native<Cfg::kBk, Cfg::kBn, KCB ? TileB::kStagedLds : TileB::kLds, Cfg::kThreads>(
        b_stage(stage), b, n0, kt * Cfg::kBk, tid);
  };
  auto transpose = [&](int stage, int kt) {
    if constexpr (TileA::kTransposed)
      transpose_staged<TileA, Cfg::kBk, Cfg::kBm, Cfg::kThreads>(a_kmajor(kt), a_stage(stage), tid);
    if constexpr (TileB::kTransposed)
      transpose_staged<TileB, Cfg::kBk, Cfg::kBn, Cfg::kThreads>(b_kmajor(kt), b_stage(stage), tid);
  };
  auto multiply = [&](int stage, int kt) {
    tile.template multiply<Cfg::kBk, TileA::kLds, TileB::kLds>(
        TileA::kTransposed ? a_kmajor(kt) : a_stage(stage),
        TileB::kTransposed ? b_kmajor(kt) : b_stage(stage), row0, col0);
  };
  const int k_tiles = (a.extent_k + Cfg::kBk - 1) / Cfg::kBk;
  constexpr bool kTransposes = L::kTransposes;
  if constexpr (kTransposes && Cfg::kKc == KcTiles::TransposeAhead) {
    pipelined_k_loop_ahead<Cfg::kStages>(k_tiles, load, transpose, multiply);
  } else if constexpr (!L::kFragmentLoop) {
    pipelined_k_loop<Cfg::kStages>(k_tiles, load, [&](int stage) {
      if constexpr (kTransposes) {
        // The loop's barrier has published this stage and every thread is done with the
        // K-major tile of the previous one; a second barrier publishes the new one.
        transpose(stage, 0);
        __syncthreads();
      }
      multiply(stage, 0);
    });
  } else {
    typename Tile::Fragment fragment[2];
    auto load_fragment = [&](int stage, int step, int buffer) {
      Tile::template load_fragment<TileA::kLds, TileB::kLds>(
          fragment[buffer], a_stage(stage), b_stage(stage), row0, col0, step * Tile::kStepK);
    };
    pipelined_k_loop_fragments<L::kBuffers, Cfg::kBk / Tile::kStepK>(
        k_tiles, load, load_fragment, [&](int buffer) { tile.fma(fragment[buffer]); });
  }
  if constexpr (kClusterSplit) {
    // The block's partial product is staged over the pipeline's shared memory.
    constexpr int kPartialLds = Cfg::kBn + 4;
    static_assert(Cfg::kBm * kPartialLds * int(sizeof(float)) <= L::kSmemBytes,
                  "the partial product must fit in the pipeline's shared memory");
    __syncthreads();  // every thread is done with the pipeline's shared memory
    tile.template stage<kPartialLds>(smem, row0, col0);
    cluster_split_k_store<Cfg::kBm, Cfg::kBn, kPartialLds, Cfg::kThreads>(c, smem, m0, n0, tid);
  } else {
    tile.store(c, m0, n0, row0, col0);
  }
}

// kMaySplit: plan may have several K slices (the small tile), so the cluster kernel is built too.
template <class Cfg, bool kMaySplit>
void launch_with(const Problem& p, SplitK plan, cudaStream_t stream) {
  with_layout(p, [&](auto a_kc, auto b_kc) {
    constexpr bool KCA = decltype(a_kc)::value, KCB = decltype(b_kc)::value;
    constexpr int smem_bytes = Cfg::template For<KCA, KCB>::kSmemBytes;
    dim3 grid = tile_grid<Cfg::kBm, Cfg::kBn>(p);
    grid.z = plan.splits;
    const Operand<KCA> a = operand_a<KCA>(p);
    const Operand<KCB> b = operand_b<KCB>(p);
    if constexpr (kMaySplit) {
      if (plan.splits > 1 && plan.splits <= kMaxClusterSplits && clusters_supported()) {
        constexpr auto kernel = warptile_kernel<Cfg, KCA, KCB, true>;
        allow_dynamic_smem<kernel>(smem_bytes);
        launch_split_k_cluster(kernel, grid, Cfg::kThreads, smem_bytes, stream, a, b, epilogue(p),
                               plan.k_per_split);
        return;
      }
    }
    constexpr auto kernel = warptile_kernel<Cfg, KCA, KCB, false>;
    allow_dynamic_smem<kernel>(smem_bytes);
    run_split_k(p, plan, stream, [&](const Epilogue& c, int k_per_split) {
      kernel<<<grid, Cfg::kThreads, smem_bytes, stream>>>(a, b, c, k_per_split);
      CUDA_CHECK_LAUNCH();
    });
  });
}

// The tile's plan: K split across blocks until the grid gives 3 blocks per multiprocessor, in at
// most one cluster of slices.
template <class Cfg>
SplitK split_plan(const Problem& p, int sms) {
  return plan_split_k<Cfg::kBk>(p, tile_count<Cfg::kBm, Cfg::kBn>(p), sms, 3, kMaxClusterSplits);
}

}  // namespace

// The large block tile when it gives every multiprocessor a block. Otherwise the small one, K
// split across blocks until the grid fills the chip; the narrow one for an output at most its
// width wide; or the fine one where it fills the chip unsplit and the small tile's slices would
// be short.
void launch_warptile(const Problem& p, cudaStream_t stream) {
  const int sms = multiprocessor_count();
  const long large_tiles = tile_count<LargeTile::kBm, LargeTile::kBn>(p);
  if (large_tiles >= sms) {
    launch_with<LargeTile, false>(p, SplitK{1, p.k}, stream);
    return;
  }
  if (p.n <= NarrowTile::kBn) {
    launch_with<NarrowTile, true>(p, split_plan<NarrowTile>(p, sms), stream);
    return;
  }
  static_assert(SmallTile::kBk == FineTile::kBk, "both plans count K tiles of one size");
  const SplitK small = split_plan<SmallTile>(p, sms), fine = split_plan<FineTile>(p, sms);
  if (finer_tile_beats_split<SmallTile::kBk>(small, fine)) {
    launch_with<FineTile, true>(p, fine, stream);
  } else {
    launch_with<SmallTile, true>(p, small, stream);
  }
}

}  // namespace gemm::detail
