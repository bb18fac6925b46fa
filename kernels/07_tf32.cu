// Step 7 — tensor cores. Each warp multiplies its warp tile with mma.sync m16n8k8 TF32
// instructions (inputs rounded to TF32's 10-bit mantissa, products accumulated in fp32), which do
// 16·8·8 multiply-adds per instruction instead of one FMA per thread. Results differ from fp32 by
// about 1e-3 relative: an explicit choice (variant tf32), never a substitute for an fp32 variant.
// Change from 06, two ideas:
//   1. Tensor cores: the thread tile becomes per-warp MMA fragments read straight from shared
//      memory (mma_sync.cuh). Each operand's tile is kept in its global layout (K-major for a
//      K-major operand, MN-major otherwise), and the padding (4 or 8 floats) makes each fragment
//      read conflict-free.
//   2. A 3-stage cp.async pipeline in place of step 6's registers-staged double buffer. cp.async
//      copies global memory straight into shared memory, without passing through registers, and
//      does not block the thread: the copies of K tiles kt + 1 and kt + 2 are in flight while tile
//      kt is multiplied. So each thread issues its 16-byte copies (a tile in its global layout
//      needs no transpose, so every copy is 16 bytes wide), commits them as one group per K tile,
//      and waits only for the oldest group before the tile's one barrier (pipelined_k_loop,
//      pipeline.cuh, spelled out beside the call). With the copies off the registers, the
//      tensor-core steps can afford BK = 32 and three buffers; step 5 found 4-byte cp.async copies
//      slower than registers, but a K-major tile kept K-major needs none.
// The tile follows the problem: a 128×128 tile finishes so fast that where M×N has fewer such
// tiles than multiprocessors (the MLP's M = 256) most of the chip would sit idle: there a 64×64
// tile runs, K split across blocks until the grid fills it.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
//
// Run it (a build in build/, scripts/train.sh makes one):
//   build/apps/gemm_bench/gemm_bench --variants warptile,tf32 --shapes 4096
//   scripts/train.sh --gemm tf32 --epochs 2
#include "kernels/launchers.h"
#include "kernels/mma_sync.cuh"

namespace gemm::detail {
namespace {

using mma_ops::Tf32x1;

// For grids that give every multiprocessor a block.
struct LargeTile {
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32, kWarpM = 64, kWarpN = 32,
                       kStages = 3;
};
static_assert(MmaShape<LargeTile>::kThreads == 256, "8 warps of 64×32 cover the 128×128 tile");
// For the smaller grids, K split.
struct SmallTile {
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 32, kWarpM = 32, kWarpN = 32,
                       kStages = 3;
};
static_assert(MmaShape<SmallTile>::kThreads == 128, "4 warps of 32×32 cover the 64×64 tile");

// Block (blockIdx.y, blockIdx.x) computes the kBlockM × kBlockN tile of C from K slice blockIdx.z
// (k_per_split long); warp w its kWarpM × kWarpN warp tile of kFragsM × kFragsN MMA tiles (16×8).
template <class Cfg, bool KMajorA, bool KMajorB>
__global__ void __launch_bounds__(MmaShape<Cfg>::kThreads)
    tf32_kernel(Operand<KMajorA> a, Operand<KMajorB> b, Epilogue c, int k_per_split) {
  using Shape = MmaShape<Cfg>;
  using Stage = MmaStage<Cfg, KMajorA, KMajorB>;
  using TileA = typename Stage::TileA;
  using TileB = typename Stage::TileB;
  enter_k_slice(a, b, c, k_per_split);
  extern __shared__ __align__(16) float smem[];  // kStages × (A's tile, B's tile)
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int group = lane / 4, quad = lane % 4;  // the MMA fragment coordinates of this lane
  const int m0 = blockIdx.y * Cfg::kBlockM, n0 = blockIdx.x * Cfg::kBlockN;
  const int warp_row = (warp / Shape::kWarpsN) * Cfg::kWarpM,
            warp_col = (warp % Shape::kWarpsN) * Cfg::kWarpN;

  float acc[Shape::kFragsM][Shape::kFragsN][4] = {};
  auto a_tile = [&](int stage) { return smem + stage * Stage::kFloats; };
  auto b_tile = [&](int stage) { return smem + stage * Stage::kFloats + TileA::kFloats; };
  // The cp.async pipeline (idea 2). TUTORIAL: the call below is, with copy(s, t) the 16-byte
  // cp.async copies of K tile t into stage s (cp_async_tile_native) and k_tiles = K / kBlockK:
  //   for (int s = 0; s < kStages - 1; ++s) { copy(s, s); cp_async_commit(); }  // tiles 0, 1
  //   for (int kt = 0; kt < k_tiles; ++kt) {
  //     cp_async_wait<kStages - 2>();  // all but the newest group landed: tile kt is in place
  //     __syncthreads();               // … for every thread; stage (kt − 1) % kStages is free
  //     copy((kt + kStages - 1) % kStages, kt + kStages - 1); cp_async_commit();
  //     multiply(kt % kStages);        // the MMAs below, while two tiles are in flight
  //   }
  // (copies past the last tile are skipped; their empty groups keep the count uniform)
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
          // TUTORIAL: for each MMA tile i of its warp tile's rows (r = warp_row + 16·i + group,
          // k = k8 + quad) and j of its columns (n = warp_col + 8·j + group) the lane loads its
          // share of the fragments from the tiles (A(r, k): A's tile at row r, column k):
          //   af[i].x = tf32({A(r, k), A(r + 8, k), A(r, k + 4), A(r + 8, k + 4)})
          //   bf[j].x = tf32({B(n, k), B(n, k + 4)})
          // then issues one mma.sync per pair: acc[i][j] += af[i] · bf[j].
          Tf32x1::Fragment<4> af[Shape::kFragsM];
#pragma unroll
          for (int i = 0; i < Shape::kFragsM; ++i)
            af[i] = load_a_fragment<TileA, Tf32x1>(as, warp_row + i * kMmaM + group, k8 + quad);
          Tf32x1::Fragment<2> bf[Shape::kFragsN];
#pragma unroll
          for (int j = 0; j < Shape::kFragsN; ++j)
            bf[j] = load_b_fragment<TileB, Tf32x1>(bs, warp_col + j * kMmaN + group, k8 + quad);
#pragma unroll
          for (int i = 0; i < Shape::kFragsM; ++i)
#pragma unroll
            for (int j = 0; j < Shape::kFragsN; ++j) Tf32x1::mma(acc[i][j], af[i], bf[j]);
        }
      });

#pragma unroll
  for (int i = 0; i < Shape::kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < Shape::kFragsN; ++j)
      store_accumulator(c, m0 + warp_row + i * kMmaM + group, n0 + warp_col + j * kMmaN + 2 * quad,
                        acc[i][j]);
}

// One config on p (M×N×K), K split as `plan` says.
template <class Cfg>
void launch_tile(const Problem& p, SplitK plan, cudaStream_t stream) {
  with_layout(p, [&](auto a_k_major, auto b_k_major) {
    constexpr bool KMajorA = decltype(a_k_major)::value, KMajorB = decltype(b_k_major)::value;
    launch_mma_sync_kernel<Cfg, KMajorA, KMajorB, tf32_kernel<Cfg, KMajorA, KMajorB>>(p, plan,
                                                                                      stream);
  });
}

}  // namespace

// C (M×N) = op(A) (M×K) · op(B) (K×N): the large tile when it gives every multiprocessor a block;
// otherwise the small one, K split until the grid fills the chip (plan_split_k, split_k.cuh).
void launch_tf32_mma(const Problem& p, cudaStream_t stream) {
  const int sms = multiprocessor_count();
  if (tile_count<LargeTile::kBlockM, LargeTile::kBlockN>(p) >= sms) {
    launch_tile<LargeTile>(p, SplitK{1, p.k}, stream);
    return;
  }
  const long small_tiles = tile_count<SmallTile::kBlockM, SmallTile::kBlockN>(p);
  launch_tile<SmallTile>(p, plan_split_k<SmallTile::kBlockK>(p, small_tiles, sms), stream);
}

}  // namespace gemm::detail
