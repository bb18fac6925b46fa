// tf32x3_fast's mma.sync tiles (fast/tf32x3_fast.cu): step 10's kernel (10_tf32x3.cu) built from
// the same primitives (mma_sync.cuh), with two production additions:
//   - the arithmetic is a parameter (mma_ops::Tf32x3 in production; mma_ops::Tf32x1 gives step 7's
//     instructions, for tuning);
//   - kStagedOutput: the output tile goes through shared memory to be stored a float4 row at a
//     time (tf32x3_fast's short-K tiles, whose blocks do little but store); otherwise each thread
//     stores its fragments straight to C, as steps 7 and 10 do;
//   - split-K through a cluster (cluster_split_k.cuh), the partials staged the same way, and
//     dependent launch (launch.cuh).
// launch_split_tile runs one config with tf32x3_fast's split-K plan; launch_narrow_or_short_k
// serves the shapes wgmma's tiles do not, for tf32_fast and tf32x3_fast.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#pragma once

#include "kernels/fast/cluster_split_k.cuh"
#include "kernels/fast/phase_times.cuh"
#include "kernels/fast/split_tf32.cuh"
#include "kernels/launchers.h"
#include "kernels/mma_sync.cuh"

namespace gemm::detail {

// A tile config here names what an mma.sync config does (MmaShape, mma_sync.cuh) and whether its
// output is staged; deriving from MmaTileDefaults leaves it unstaged:
//   struct ShortKTile : MmaTileDefaults {
//     static constexpr int kBlockM = 64, kBlockN = 128, kBlockK = 32, kWarpM = 32, kWarpN = 64,
//                          kStages = 2;
//     static constexpr bool kStagedOutput = true;
//   };
struct MmaTileDefaults {
  static constexpr bool kStagedOutput = false;
};

// Block (blockIdx.y, blockIdx.x) computes the kBlockM × kBlockN tile of C from K slice blockIdx.z
// (k_per_split long); warp w its kWarpM × kWarpN warp tile of kFragsM × kFragsN MMA tiles (16×8).
// kClusterSplit: the K slices of a tile form a cluster and sum their staged partials in shared
// memory; otherwise each slice writes its own (the workspace, or C when unsplit).
template <class Cfg, class Arithmetic, bool KMajorA, bool KMajorB, bool kClusterSplit>
__global__ void __launch_bounds__(MmaShape<Cfg>::kThreads)
    mma_sync_tile_kernel(Operand<KMajorA> a, Operand<KMajorB> b, Epilogue c, int k_per_split) {
  using Shape = MmaShape<Cfg>;
  using Stage = MmaStage<Cfg, KMajorA, KMajorB>;
  using TileA = typename Stage::TileA;
  using TileB = typename Stage::TileB;
  GEMM_PHASE_BEGIN(MmaSync);
  await_prior_kernels();
  GEMM_PHASE(Awaited);
  enter_k_slice(a, b, c, k_per_split, !kClusterSplit);
  extern __shared__ __align__(16) float smem[];  // kStages × (A's tile, B's tile)
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int group = lane / 4, quad = lane % 4;  // the MMA fragment coordinates of this lane
  const int m0 = blockIdx.y * Cfg::kBlockM, n0 = blockIdx.x * Cfg::kBlockN;
  const int warp_row = (warp / Shape::kWarpsN) * Cfg::kWarpM,
            warp_col = (warp % Shape::kWarpsN) * Cfg::kWarpN;

  float acc[Shape::kFragsM][Shape::kFragsN][4] = {};
  auto a_tile = [&](int stage) { return smem + stage * Stage::kFloats; };
  auto b_tile = [&](int stage) { return smem + stage * Stage::kFloats + TileA::kFloats; };
  pipelined_k_loop<Cfg::kStages>(
      (a.extent_k + Cfg::kBlockK - 1) / Cfg::kBlockK,
      [&](int stage, int kt) {
        cp_async_tile_native<Cfg::kBlockK, Cfg::kBlockM, TileA::kLds, Shape::kThreads>(
            a_tile(stage), a, m0, kt * Cfg::kBlockK, tid);
        cp_async_tile_native<Cfg::kBlockK, Cfg::kBlockN, TileB::kLds, Shape::kThreads>(
            b_tile(stage), b, n0, kt * Cfg::kBlockK, tid);
      },
      [&](int stage) {
        const float* as = a_tile(stage);
        const float* bs = b_tile(stage);
#pragma unroll
        for (int k8 = 0; k8 < Cfg::kBlockK; k8 += kMmaK) {
          typename Arithmetic::template Fragment<4> af[Shape::kFragsM];
#pragma unroll
          for (int i = 0; i < Shape::kFragsM; ++i)
            af[i] = load_a_fragment<TileA, Arithmetic>(as, warp_row + i * kMmaM + group, k8 + quad);
          typename Arithmetic::template Fragment<2> bf[Shape::kFragsN];
#pragma unroll
          for (int j = 0; j < Shape::kFragsN; ++j)
            bf[j] = load_b_fragment<TileB, Arithmetic>(bs, warp_col + j * kMmaN + group, k8 + quad);
#pragma unroll
          for (int i = 0; i < Shape::kFragsM; ++i)
#pragma unroll
            for (int j = 0; j < Shape::kFragsN; ++j) Arithmetic::mma(acc[i][j], af[i], bf[j]);
        }
      });
  GEMM_PHASE(KLoop);

  if constexpr (Cfg::kStagedOutput || kClusterSplit) {
    // The lane's accumulators (store_accumulator's elements) into a kBlockM × kBlockN tile over
    // the stages, then stored a float4 at a time, or summed across the cluster.
    constexpr int kOutputLd = (Cfg::kBlockN + 31) / 32 * 32 + 8;
    static_assert(kOutputLd % 32 == 8,
                  "a row stride ≡ 8 (mod 32) makes the float2 writes conflict-free");
    static_assert(Cfg::kBlockM * kOutputLd <= Cfg::kStages * Stage::kFloats,
                  "the staged output tile must fit in the pipeline's shared memory");
    cp_async_wait<0>();
    __syncthreads();  // every warp is done reading the stages
#pragma unroll
    for (int i = 0; i < Shape::kFragsM; ++i)
#pragma unroll
      for (int j = 0; j < Shape::kFragsN; ++j) {
        float* out = smem + (warp_row + i * kMmaM + group) * kOutputLd + warp_col + j * kMmaN;
        *reinterpret_cast<float2*>(out + 2 * quad) = make_float2(acc[i][j][0], acc[i][j][1]);
        *reinterpret_cast<float2*>(out + 8 * kOutputLd + 2 * quad) =
            make_float2(acc[i][j][2], acc[i][j][3]);
      }
    __syncthreads();
    if constexpr (kClusterSplit)
      cluster_split_k_store<Cfg::kBlockM, Cfg::kBlockN, kOutputLd, Shape::kThreads>(c, smem, m0, n0,
                                                                                    tid);
    else
      store_staged_tile<Cfg::kBlockM, Cfg::kBlockN, kOutputLd, Shape::kThreads>(c, smem, m0, n0,
                                                                                tid);
    if constexpr (!kClusterSplit) GEMM_PHASE(Stored);
  } else {
#pragma unroll
    for (int i = 0; i < Shape::kFragsM; ++i)
#pragma unroll
      for (int j = 0; j < Shape::kFragsN; ++j)
        store_accumulator(c, m0 + warp_row + i * kMmaM + group,
                          n0 + warp_col + j * kMmaN + 2 * quad, acc[i][j]);
    GEMM_PHASE(Stored);
  }
  GEMM_PHASE_END();
}

// One config on p (M×N×K), K split as `plan` says.
template <class Cfg, class Arithmetic>
void launch_mma_sync_tile(const Problem& p, SplitK plan, cudaStream_t stream) {
  with_layout(p, [&](auto a_k_major, auto b_k_major) {
    constexpr bool KMajorA = decltype(a_k_major)::value, KMajorB = decltype(b_k_major)::value;
    launch_planned_split_k<Cfg::kBlockK,
                           mma_sync_tile_kernel<Cfg, Arithmetic, KMajorA, KMajorB, true>,
                           mma_sync_tile_kernel<Cfg, Arithmetic, KMajorA, KMajorB, false>>(
        p, plan, tile_grid<Cfg::kBlockM, Cfg::kBlockN>(p), MmaShape<Cfg>::kThreads,
        MmaStage<Cfg, KMajorA, KMajorB>::kSmemBytes, stream, operand_a<KMajorA>(p),
        operand_b<KMajorB>(p));
  });
}

// A tile with K split across blocks until the grid gives BlocksPerSm blocks per multiprocessor,
// in slices of at least kSplitTileMinKTiles K tiles: these tiles are small and their blocks
// short, so several share a multiprocessor. At most kMaxClusterSplits slices where clusters sum
// them (no reduction kernel on the step's critical path: docs/NOTES.md, "Dependent launch and
// clusters that fit"), else kSplitTileMaxSplits.
constexpr int kSplitTileBlocksPerSm = 4, kSplitTileMinKTiles = 2, kSplitTileMaxSplits = 16;
template <class Cfg, class Arithmetic = mma_ops::Tf32x3, int BlocksPerSm = kSplitTileBlocksPerSm>
void launch_split_tile(const Problem& p, cudaStream_t stream) {
  const int max_splits = clusters_supported() ? kMaxClusterSplits : kSplitTileMaxSplits;
  const SplitK plan = plan_split_k<Cfg::kBlockK>(
      p, tile_count<Cfg::kBlockM, Cfg::kBlockN>(p), multiprocessor_count(),
      {.blocks_per_sm = BlocksPerSm, .max_splits = max_splits, .min_k_tiles = kSplitTileMinKTiles});
  launch_mma_sync_tile<Cfg, Arithmetic>(p, plan, stream);
}

// The shapes that wgmma's tiles (at least 64 rows, K tiles of 32) serve badly, for tf32_fast and
// tf32x3_fast alike:
//   narrow: an output at most 16 rows or 16 columns (the MLP's output layer, N = 10, and its
//     weight gradient, M = 10): a 16-wide mma.sync tile, K split across blocks. A 128×128 tile
//     would be 92% padding.
//   short K: K at most one K tile (32; the output layer's input gradient, K = 10): the output
//     staged in shared memory and stored a row at a time, since these blocks do little but store;
//     a 64×128 tile where that gives every multiprocessor a block, else 16×64. On the large grids,
//     K ≤ 16 runs on `fast` (fp32 on CUDA cores) instead.
// The configs came from scripts/tuning/tune.sh tf32x3 (docs/results/tuning_tf32x3_h200.txt).
namespace narrow_tiles {
// 4 warps of 16×16 each.
struct NarrowN : MmaTileDefaults {
  static constexpr int kBlockM = 64, kBlockN = 16, kBlockK = 32, kWarpM = 16, kWarpN = 16,
                       kStages = 3;
};
// 4 warps of 16×16 each.
struct NarrowM : MmaTileDefaults {
  static constexpr int kBlockM = 16, kBlockN = 64, kBlockK = 32, kWarpM = 16, kWarpN = 16,
                       kStages = 3;
};
// 4 warps of 32×64 each, the output staged.
struct ShortKLarge {
  static constexpr int kBlockM = 64, kBlockN = 128, kBlockK = 32, kWarpM = 32, kWarpN = 64,
                       kStages = 2;
  static constexpr bool kStagedOutput = true;
};
// 4 warps of 16×16 each, the output staged.
struct ShortKSmall {
  static constexpr int kBlockM = 16, kBlockN = 64, kBlockK = 32, kWarpM = 16, kWarpN = 16,
                       kStages = 2;
  static constexpr bool kStagedOutput = true;
};

// An output narrower than this in M or N takes a narrow tile; K up to kShortK takes a short-K
// one. On a grid that fills the chip, K up to one K tile of `fast` (16) takes `fast`: such a GEMM
// does 2K flops per element of C, so storing C is nearly all of its cost, and fp32 FMAs on CUDA
// cores store it sooner than the split's staged tile (docs/NOTES.md, "tf32x3_fast").
constexpr int kNarrow = 16;
constexpr int kShortK = ShortKLarge::kBlockK, kFastK = 16;
static_assert(NarrowN::kBlockN == kNarrow && NarrowM::kBlockM == kNarrow,
              "a narrow tile is exactly as wide as the outputs it serves");
}  // namespace narrow_tiles

// Runs p on a narrow or short-K tile with the given arithmetic and returns true, or returns
// false where p is neither narrow nor short in K.
template <class Arithmetic>
bool launch_narrow_or_short_k(const Problem& p, cudaStream_t stream) {
  using namespace narrow_tiles;
  if (p.n <= kNarrow) {
    launch_split_tile<NarrowN, Arithmetic>(p, stream);
  } else if (p.m <= kNarrow) {
    launch_split_tile<NarrowM, Arithmetic>(p, stream);
  } else if (p.k <= kShortK) {
    if (tile_count<ShortKLarge::kBlockM, ShortKLarge::kBlockN>(p) < multiprocessor_count())
      launch_split_tile<ShortKSmall, Arithmetic>(p, stream);
    else if (p.k <= kFastK)
      launch_fast(p, stream);
    else
      launch_split_tile<ShortKLarge, Arithmetic>(p, stream);
  } else {
    return false;
  }
  return true;
}

// Gradients on few tiles: the weight gradients (TN) and the input gradients (NN), whose B is
// MN-major. The wgmma pipeline transposes an MN-major tile in shared memory at every K tile (both
// of TN's), and loads without TMA where an operand is not 16-byte aligned. With few 128×128
// tiles and K short enough that its split-K cannot hide that cost, an mma.sync tile, which reads
// MN-major fragments as they are, wins. Measured on the H200 (scripts/tuning/tune.sh tn,
// docs/results/tuning_tn_h200.txt), in TF32 and 3×TF32 alike, against what tf32_fast and
// tf32x3_fast ran before:
//   TN: wins at 512×784×128 (28 tiles; 9.1 µs against 12.8 in TF32) and at every misaligned
//     shape swept (21 and 49 tiles); ties at 1024×784×256 (56); loses from 1024×1024×256 (64) and
//     1500×784×96 (84) up.
//   NN: wins at 128×512×512 (4 tiles; 8.3 µs against 11.3), 160×640×480, 96×1500×100 and the
//     misaligned 200×777×333; loses at 256×1024×1024 and 256×784×1024 (16 and 14 tiles, K = 1024).
namespace mn_major_b_tiles {
// 4 warps of 32×32, K split for 2 blocks per multiprocessor.
struct SmallMnMajorB : MmaTileDefaults {
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 32, kWarpM = 32, kWarpN = 32,
                       kStages = 3;
};
constexpr int kBlocksPerSm = 2;
// Taken below one 128×128 tile per this many multiprocessors (one per multiprocessor where an
// operand is misaligned), for K up to kMaxK.
constexpr int kMultiprocessorsPerTile = 3, kMaxK = 512;
}  // namespace mn_major_b_tiles

// Runs p on SmallMnMajorB with the given arithmetic and returns true where p is TN or NN on few
// tiles (above), else returns false.
template <class Arithmetic>
bool launch_small_mn_major_b(const Problem& p, cudaStream_t stream) {
  using namespace mn_major_b_tiles;
  if (p.op_b != Op::N || p.k > kMaxK) return false;
  const bool aligned = p.op_a == Op::T ? operand_a<false>(p).vec4_ok && operand_b<false>(p).vec4_ok
                                       : operand_a<true>(p).vec4_ok && operand_b<false>(p).vec4_ok;
  const long tiles = tile_count<128, 128>(p), sms = multiprocessor_count();
  if (tiles * (aligned ? kMultiprocessorsPerTile : 1) >= sms) return false;
  launch_split_tile<SmallMnMajorB, Arithmetic, kBlocksPerSm>(p, stream);
  return true;
}

}  // namespace gemm::detail
