// Step 6 — warp tiling. The block tile is split into warp tiles and each warp tile into thread
// tiles, as CUTLASS names the hierarchy: a warp's fragment reads at one k then cover a compact
// 32×64 patch (8 distinct float4 of A, 4 of B, where step 5's warp, two rows of 16 threads, read 2
// and 16). The warp, not a square grid of threads, is now the unit the block is built from, so
// the block tile can grow by adding warps, along M and N and also along K:
//   large grids: 128×256, 16 warps of 32×64, each K tile loaded once for twice as many FMAs per
//     value of A;
//   small grids (M = 256): 64×64 with its 8 warps in two groups that each multiply half of every
//     16-deep K tile ("sliced K", as CUTLASS calls it). The two partial tiles are summed through
//     shared memory, so the block does the work of two K slices of step 5 without their trip
//     through the workspace: fewer slices cross the grid, and a weight gradient (K = 256) needs
//     none.
// The tensor-core steps keep this hierarchy.
// Change from 05: threads are numbered 1-D and mapped warp → lane, a thread's row and column
// groups sit inside its warp tile; the tiles are warp tiles, the small one sliced along K.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
//
// Run it (a build in build/, scripts/train.sh makes one):
//   build/apps/gemm_bench/gemm_bench --variants dbuf,warptile --shapes 4096
//   scripts/train.sh --gemm warptile --epochs 2
#include "kernels/launchers.h"
#include "kernels/register_tile.cuh"
#include "kernels/split_k.cuh"

namespace gemm::detail {
namespace {

struct LargeTile {  // 16 warps of 32×64, lanes of 8×8
  static constexpr int kBlockM = 128, kBlockN = 256, kBlockK = 8, kSlicesK = 1;
  static constexpr int kWarpM = 32, kWarpN = 64, kThreadM = 8, kThreadN = 8;
};
struct SmallTile {  // 2 slices of K × 4 warps of 32×32, lanes of 8×4
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 16, kSlicesK = 2;
  static constexpr int kWarpM = 32, kWarpN = 32, kThreadM = 8, kThreadN = 4;
};
constexpr int kSmallTileBlocksPerSm = 1;  // 8 warps each

template <class Cfg>
struct WarpTileShape : Cfg {
  static constexpr int kWarpsN = Cfg::kBlockN / Cfg::kWarpN;
  static constexpr int kLanesM = Cfg::kWarpM / Cfg::kThreadM;  // thread tiles in a warp tile
  static constexpr int kLanesN = Cfg::kWarpN / Cfg::kThreadN;
  static constexpr int kSliceThreads = 32 * (Cfg::kBlockM / Cfg::kWarpM) * kWarpsN;
  static constexpr int kThreads = Cfg::kSlicesK * kSliceThreads;
  static constexpr int kLds = (Cfg::kBlockM > Cfg::kBlockN ? Cfg::kBlockM : Cfg::kBlockN) + 4;
  static constexpr int kTileFloats = Cfg::kBlockK * kLds;
  static constexpr int kPartialFloats = Cfg::kSlicesK > 1 ? Cfg::kBlockM* Cfg::kBlockN : 1;
  // Blocks per multiprocessor the registers must leave room for: 128 registers a thread.
  static constexpr int kMinBlocks = 65536 / (kThreads * 128);
  static_assert(Cfg::kBlockM % Cfg::kWarpM == 0 && Cfg::kBlockN % Cfg::kWarpN == 0,
                "warp tiles must tile the block tile");
  static_assert(kLanesM * kLanesN == 32, "a warp tile is covered by exactly 32 thread tiles");
  static_assert(kThreads <= 1024, "at most 1024 threads");
  static_assert((2 * 2 * kTileFloats + kPartialFloats) * sizeof(float) <= 48 * 1024,
                "static shared memory is limited to 48 KB");
  // Lane (ly, lx) owns rows ly·4 + g·kRowGap + 0..3 and columns lx·4 + g·kColGap + 0..3 of its
  // warp tile.
  using Tile = RegisterTile<Cfg::kThreadM, Cfg::kThreadN, 4 * kLanesM, 4 * kLanesN>;
};

// One block computes the BlockM×BlockN tile of C at (blockIdx.y, blockIdx.x) over its K slice
// (blockIdx.z, split_k.cuh).
template <class Cfg, bool KMajorA, bool KMajorB>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    warptile_kernel(Operand<KMajorA> a, Operand<KMajorB> b, Epilogue c, int k_per_split) {
  enter_k_slice(a, b, c, k_per_split);
  __shared__ __align__(16) float a_tiles[2][Cfg::kTileFloats];  // a_tiles[buffer][k][m]
  __shared__ __align__(16) float b_tiles[2][Cfg::kTileFloats];  // b_tiles[buffer][k][n]
  __shared__ float partial[Cfg::kPartialFloats];                // partial[m][n]: the slices' sum
  const int tid = threadIdx.x, slice = tid / Cfg::kSliceThreads;
  const int warp = tid % Cfg::kSliceThreads / 32, lane = tid % 32;
  const int m0 = blockIdx.y * Cfg::kBlockM, n0 = blockIdx.x * Cfg::kBlockN;
  const int warp_row = (warp / Cfg::kWarpsN) * Cfg::kWarpM,
            warp_col = (warp % Cfg::kWarpsN) * Cfg::kWarpN;
  const int row0 = warp_row + (lane / Cfg::kLanesN) * 4,
            col0 = warp_col + (lane % Cfg::kLanesN) * 4;

  typename Cfg::Tile tile;
  // TUTORIAL: the call below is step 5's double-buffered K loop (written out in 05_dbuf.cu) over
  // the block's kThreads threads, with one change: slice s of them multiplies only its
  // kSliceK = kBlockK / kSlicesK k of each K tile,
  //   tile.multiply<kSliceK, kLds>(a_tiles[kt % 2] + slice * kSliceK * kLds,
  //                                b_tiles[kt % 2] + slice * kSliceK * kLds, row0, col0);
  multiply_double_buffered<Cfg::kBlockK, Cfg::kBlockM, Cfg::kBlockN, Cfg::kLds, Cfg::kThreads,
                           Cfg::kSlicesK>(tile, a_tiles, b_tiles, a, b, m0, n0, row0, col0, tid,
                                          slice);
  if constexpr (Cfg::kSlicesK > 1) {
    tile.template sum_k_slices<Cfg::kSlicesK, Cfg::kBlockN>(partial, slice, row0, col0);
    if (slice > 0) return;
  }
  tile.store(c, m0, n0, row0, col0);
}

template <class Cfg>
void launch_tile(const Problem& p, SplitK plan, cudaStream_t stream) {
  using Shape = WarpTileShape<Cfg>;
  with_layout(p, [&](auto a_k_major, auto b_k_major) {
    constexpr bool KMajorA = decltype(a_k_major)::value, KMajorB = decltype(b_k_major)::value;
    dim3 grid = tile_grid<Cfg::kBlockM, Cfg::kBlockN>(p);
    grid.z = plan.splits;
    run_split_k(p, plan, stream, [&](const Epilogue& c, int k_per_split) {
      warptile_kernel<Shape, KMajorA, KMajorB><<<grid, Shape::kThreads, 0, stream>>>(
          operand_a<KMajorA>(p), operand_b<KMajorB>(p), c, k_per_split);
      CUDA_CHECK_LAUNCH();
    });
  });
}

}  // namespace

void launch_warptile(const Problem& p, cudaStream_t stream) {
  const int sms = multiprocessor_count();
  if (tile_count<LargeTile::kBlockM, LargeTile::kBlockN>(p) >= sms) {
    launch_tile<LargeTile>(p, SplitK{1, p.k}, stream);
    return;
  }
  const long tiles = tile_count<SmallTile::kBlockM, SmallTile::kBlockN>(p);
  launch_tile<SmallTile>(
      p, plan_split_k<SmallTile::kBlockK>(p, tiles, sms, {.blocks_per_sm = kSmallTileBlocksPerSm}),
      stream);
}

}  // namespace gemm::detail
