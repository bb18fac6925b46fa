// The production fp32 kernel's building blocks (variant `fast`, fast.cu): step 6's block → warp →
// thread tiling (06_warptile.cu), made configurable per shape and layout. A tile config (a struct
// of named members, WarpTileShape) names the block, warp and thread tiles, the pipeline depth and
// how a K-major operand's tiles are read; launch_warptile_config runs one config with a split-K
// plan. fast.cu picks the configs the tune sweep chose (tools/tune/tune_tiles, which instantiates
// other configs through this header). docs/NOTES.md, "fast", has the measurements behind each
// choice.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#pragma once

#include "base/launch.cuh"
#include "kernels/fast/pipeline_loops.cuh"
#include "kernels/fast/thread_tile.cuh"
#include "kernels/pipeline.cuh"
#include "kernels/split_k.cuh"

namespace gemm::detail {

// How the tiles of a K-major operand (A with op N, B with op T) reach the thread tile; they
// are always copied as stored, K-major, 16 bytes per cp.async (StagedOperand).
enum class KMajorTiles {
  ReadKMajor,      // read as copied, a float4 along k per row: more live registers
  Transpose,       // transposed into one MN-major tile per K tile, then a second barrier
  TransposeAhead,  // transposed one K tile ahead into two MN-major tiles: one barrier, Stages ≥ 3
};

// One operand's shared tiles. An MN-major operand is copied straight into a MN-major tile,
// tile[k·kLds + x] (16-byte cp.async along x), which the thread tile reads a float4 of 4
// neighbouring x at a time. A K-major one is copied as it is stored, K-major
// staged[x·kStagedLds + k], again 16 bytes per cp.async; then the thread tile reads it as it is
// or from its transposed MN-major tile(s), as kKMajorTiles says (docs/NOTES.md, "fast"). A staged
// row stride of an odd number of float4s (≡ 4 mod 8 floats) puts the rows that 8 neighbouring
// threads read in 8 different 16-byte bank groups; MN-major rows keep 4 floats of padding.
template <int BK, int BX, bool KMajor, KMajorTiles kKMajorTiles>
struct StagedOperand {
  static constexpr int kMNMajorLds = BX + 4;
  static constexpr int kStagedLds = BK + 4;                                         // KMajor only
  static constexpr int kStageFloats = KMajor ? BX * kStagedLds : BK * kMNMajorLds;  // per stage
  static constexpr bool kTransposed = KMajor && kKMajorTiles != KMajorTiles::ReadKMajor;
  static constexpr int kTransposedTiles = kKMajorTiles == KMajorTiles::TransposeAhead ? 2 : 1;
  static constexpr int kTransposedTileFloats = BK * kMNMajorLds;
  static constexpr int kTransposedFloats =
      kTransposed ? kTransposedTiles * kTransposedTileFloats : 0;
  // What the thread tile reads.
  static constexpr bool kReadStaged = KMajor && !kTransposed;
  static constexpr TileLayout kLayout = kReadStaged ? TileLayout::KMajor : TileLayout::MNMajor;
  static constexpr int kLds = kReadStaged ? kStagedLds : kMNMajorLds;
  static_assert(kStagedLds % 8 == 4,
                "an K-major row stride must be an odd number of float4s for conflict-free reads");
};

// Transposes the K-major BX×BK tile `staged` into the MN-major `tile` (StagedOperand strides): each
// thread reads a float4 of one row along k and writes its 4 values down the MN-major columns.
// Neighbouring threads take neighbouring x: conflict-free reads (odd float4 stride) and writes
// (32 consecutive floats).
template <class Tile, int BK, int BX, int NT>
__device__ __forceinline__ void transpose_staged(float* tile, const float* staged, int tid) {
  for_each_strided<BX * BK / 4, NT>(tid, [&](int i) {
    const int x = i % BX, k = (i / BX) * 4;
    const float4 v = *reinterpret_cast<const float4*>(&staged[x * Tile::kStagedLds + k]);
    tile[(k + 0) * Tile::kMNMajorLds + x] = v.x;
    tile[(k + 1) * Tile::kMNMajorLds + x] = v.y;
    tile[(k + 2) * Tile::kMNMajorLds + x] = v.z;
    tile[(k + 3) * Tile::kMNMajorLds + x] = v.w;
  });
}

// A tile config names its block tile (kBlockM × kBlockN, K tiles of kBlockK), warp tile
// (kWarpM × kWarpN), thread tile (kThreadM × kThreadN), pipeline depth (kStages), how a K-major
// operand's tiles are read (kKMajorTiles) and whether the fragment reads are pipelined
// (kPipelineFragments, see For::kFragmentLoop; off when derived from WarpTileDefaults), e.g.
//   struct LargeTile : WarpTileDefaults {
//     static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 16, kWarpM = 64, kWarpN = 32,
//                          kThreadM = 8, kThreadN = 8, kStages = 4;
//     static constexpr KMajorTiles kKMajorTiles = KMajorTiles::TransposeAhead;
//   };
// WarpTileShape<Cfg> is Cfg with what follows from it, checked; the kernel takes it.
struct WarpTileDefaults {
  static constexpr bool kPipelineFragments = false;
};

template <class Cfg>
struct WarpTileShape : Cfg {
  using Cfg::kBlockK, Cfg::kBlockM, Cfg::kBlockN, Cfg::kKMajorTiles, Cfg::kPipelineFragments,
      Cfg::kStages, Cfg::kThreadM, Cfg::kThreadN, Cfg::kWarpM, Cfg::kWarpN;
  static_assert(kKMajorTiles != KMajorTiles::TransposeAhead || kStages >= 3,
                "transposing one K tile ahead needs three stages (pipelined_k_loop_ahead)");
  static_assert(!kPipelineFragments || kStages >= 3,
                "the fragment loop keeps kStages − 1 tiles in flight in kStages − 1 buffers");
  static constexpr int kWarpsM = kBlockM / kWarpM, kWarpsN = kBlockN / kWarpN;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  // Blocks per multiprocessor the registers must leave room for (__launch_bounds__): thread tiles
  // up to 8×8 get at most 128 registers, or the unrolled tile copies' hoisted addresses would
  // take the registers of a second block (2 × 256 or 4 × 128 threads).
  static constexpr int kMinBlocks = kThreadM * kThreadN <= 64 ? 65536 / (kThreads * 128) : 1;
  // The thread grid inside a warp.
  static constexpr int kLanesM = kWarpM / kThreadM, kLanesN = kWarpN / kThreadN;
  static_assert(kBlockM % kWarpM == 0 && kBlockN % kWarpN == 0,
                "warp tiles must tile the block tile");
  static_assert(kWarpM % kThreadM == 0 && kWarpN % kThreadN == 0,
                "thread tiles must tile the warp tile");
  static_assert(kLanesM * kLanesN == 32, "a warp tile is covered by exactly 32 thread tiles");
  static_assert(kBlockK % 4 == 0, "K tiles are copied in 16-byte chunks");

  // What depends on the layout (A, B K-major or not): the shared tiles, the K loop, and the
  // thread tile that reads them. Per stage A's tile then B's; after the stages, the transposed
  // tiles. A thread's float4 groups (MN-major) sit 4·kLanesM rows and 4·kLanesN columns apart in
  // its warp tile; its single rows or columns (K-major) kLanesM and kLanesN apart.
  template <bool KMajorA, bool KMajorB>
  struct For {
    using TileA = StagedOperand<kBlockK, kBlockM, KMajorA, kKMajorTiles>;
    using TileB = StagedOperand<kBlockK, kBlockN, KMajorB, kKMajorTiles>;
    static constexpr bool kTransposes = TileA::kTransposed || TileB::kTransposed;
    // Tiles read as copied, both in one layout (TN, NT), pipeline their fragment reads
    // (pipelined_k_loop_fragments). With one MN-major and one K-major (NN) the 2-k fragment reads
    // cost more than the pipelining hides (docs/NOTES.md, "fast"). That loop refills a buffer one
    // step earlier, so one buffer fewer keeps as many tiles in flight, and frees shared memory.
    static constexpr bool kFragmentLoop =
        kPipelineFragments && !kTransposes && TileA::kLayout == TileB::kLayout;
    static constexpr int kBuffers = kFragmentLoop ? kStages - 1 : kStages;
    static constexpr int kStageFloats = TileA::kStageFloats + TileB::kStageFloats;
    static constexpr int kSmemBytes =
        (kBuffers * kStageFloats + TileA::kTransposedFloats + TileB::kTransposedFloats) *
        int(sizeof(float));
    static_assert(kSmemBytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
    using Tile =
        ThreadTile<kThreadM, kThreadN, 4 * kLanesM, 4 * kLanesN, TileA::kLayout, TileB::kLayout>;
  };
};

// Shape is a WarpTileShape. Each K slice writes its own partial product: to the workspace, or to
// C when unsplit (split_k.cuh).
template <class Shape, bool KMajorA, bool KMajorB>
__global__ void __launch_bounds__(Shape::kThreads, Shape::kMinBlocks)
    warptile_kernel(Operand<KMajorA> a, Operand<KMajorB> b, Epilogue c, int k_per_split) {
  using Layout = typename Shape::template For<KMajorA, KMajorB>;
  using Tile = typename Layout::Tile;
  await_prior_kernels();
  enter_k_slice(a, b, c, k_per_split);
  extern __shared__ __align__(16) float smem[];  // see Shape::For
  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int m0 = blockIdx.y * Shape::kBlockM, n0 = blockIdx.x * Shape::kBlockN;
  // Warp tile origin inside the block tile, then thread tile origin inside the warp tile.
  const int warp_row = (warp / Shape::kWarpsN) * Shape::kWarpM,
            warp_col = (warp % Shape::kWarpsN) * Shape::kWarpN;
  const int row0 = warp_row + (lane / Shape::kLanesN) * Tile::kLaneRowStep;
  const int col0 = warp_col + (lane % Shape::kLanesN) * Tile::kLaneColStep;

  Tile tile;
  using TileA = typename Layout::TileA;
  using TileB = typename Layout::TileB;
  auto a_stage = [&](int stage) { return smem + stage * Layout::kStageFloats; };
  auto b_stage = [&](int stage) { return a_stage(stage) + TileA::kStageFloats; };
  // The MN-major tile that K tile kt is transposed into (one of two when transposed ahead).
  float* const a_transposed = smem + Layout::kBuffers * Layout::kStageFloats;
  float* const b_transposed = a_transposed + TileA::kTransposedFloats;
  auto a_mn_major = [&](int kt) {
    return a_transposed + kt % TileA::kTransposedTiles * TileA::kTransposedTileFloats;
  };
  auto b_mn_major = [&](int kt) {
    return b_transposed + kt % TileB::kTransposedTiles * TileB::kTransposedTileFloats;
  };
  auto load = [&](int stage, int kt) {
    cp_async_tile_native<Shape::kBlockK, Shape::kBlockM, KMajorA ? TileA::kStagedLds : TileA::kLds,
                         Shape::kThreads>(a_stage(stage), a, m0, kt * Shape::kBlockK, tid);
    cp_async_tile_native<Shape::kBlockK, Shape::kBlockN, KMajorB ? TileB::kStagedLds : TileB::kLds,
                         Shape::kThreads>(b_stage(stage), b, n0, kt * Shape::kBlockK, tid);
  };
  auto transpose = [&](int stage, int kt) {
    if constexpr (TileA::kTransposed)
      transpose_staged<TileA, Shape::kBlockK, Shape::kBlockM, Shape::kThreads>(a_mn_major(kt),
                                                                               a_stage(stage), tid);
    if constexpr (TileB::kTransposed)
      transpose_staged<TileB, Shape::kBlockK, Shape::kBlockN, Shape::kThreads>(b_mn_major(kt),
                                                                               b_stage(stage), tid);
  };
  auto multiply = [&](int stage, int kt) {
    tile.template multiply<Shape::kBlockK, TileA::kLds, TileB::kLds>(
        TileA::kTransposed ? a_mn_major(kt) : a_stage(stage),
        TileB::kTransposed ? b_mn_major(kt) : b_stage(stage), row0, col0);
  };
  const int k_tiles = (a.extent_k + Shape::kBlockK - 1) / Shape::kBlockK;
  constexpr bool kTransposes = Layout::kTransposes;
  if constexpr (kTransposes && Shape::kKMajorTiles == KMajorTiles::TransposeAhead) {
    pipelined_k_loop_ahead<Shape::kStages>(k_tiles, load, transpose, multiply);
  } else if constexpr (!Layout::kFragmentLoop) {
    pipelined_k_loop<Shape::kStages>(k_tiles, load, [&](int stage) {
      if constexpr (kTransposes) {
        // The loop's barrier has published this stage and every thread is done with the
        // MN-major tile of the previous one; a second barrier publishes the new one.
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
    pipelined_k_loop_fragments<Layout::kBuffers, Shape::kBlockK / Tile::kStepK>(
        k_tiles, load, load_fragment, [&](int buffer) { tile.fma(fragment[buffer]); });
  }
  tile.store(c, m0, n0, row0, col0);
}

// Blocks of config Cfg resident on one multiprocessor at once, at p's layout (queried once per
// kernel, as its shared-memory limit is set once).
template <class Cfg>
int warptile_resident_blocks(const Problem& p) {
  using Shape = WarpTileShape<Cfg>;
  int blocks = 0;
  with_layout(p, [&](auto a_k_major, auto b_k_major) {
    constexpr bool KMajorA = decltype(a_k_major)::value, KMajorB = decltype(b_k_major)::value;
    constexpr int smem_bytes = Shape::template For<KMajorA, KMajorB>::kSmemBytes;
    constexpr auto kKernel = warptile_kernel<Shape, KMajorA, KMajorB>;
    allow_dynamic_smem<kKernel>(smem_bytes);
    blocks = resident_blocks<kKernel>(Shape::kThreads, smem_bytes);
  });
  return blocks;
}

// Runs config Cfg with split-K plan `plan` (one slice: straight into C). The slices sum through
// the workspace and a reduction kernel, not in a cluster's shared memory: in a training step's
// graph, beside the other branches' kernels, the cluster launches trained 2–11% slower at four of
// five odd-width models and 1% faster at the fifth (docs/NOTES.md, "fast").
template <class Cfg>
void launch_warptile_config(const Problem& p, SplitK plan, cudaStream_t stream) {
  using Shape = WarpTileShape<Cfg>;
  with_layout(p, [&](auto a_k_major, auto b_k_major) {
    constexpr bool KMajorA = decltype(a_k_major)::value, KMajorB = decltype(b_k_major)::value;
    constexpr int smem_bytes = Shape::template For<KMajorA, KMajorB>::kSmemBytes;
    constexpr auto kKernel = warptile_kernel<Shape, KMajorA, KMajorB>;
    dim3 grid = tile_grid<Shape::kBlockM, Shape::kBlockN>(p);
    grid.z = plan.splits;
    allow_dynamic_smem<kKernel>(smem_bytes);
    run_split_k(p, plan, stream, [&](const Epilogue& c, int k_per_split) {
      launch_kernel(kKernel, {grid, dim3(Shape::kThreads), size_t(smem_bytes), stream},
                    operand_a<KMajorA>(p), operand_b<KMajorB>(p), c, k_per_split);
    });
  });
}

}  // namespace gemm::detail
