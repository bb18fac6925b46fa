// Step 6 — warp tiling. The block tile is split into warp tiles and each warp tile into thread
// tiles: block tile 128×128 → 8 warps of 64×32 → 32 lanes of 8×8. A warp's fragment reads at one
// k then cover 64 rows of A and 32 columns of B, where step 5's warp (two rows of 16 threads) read
// 16 and 128: fewer distinct addresses, and the hierarchy that the tensor-core steps build on is
// explicit, as CUTLASS names it.
// Change from 05: threads are numbered 1-D and mapped warp → lane; a thread's row and column
// groups sit 32 and 16 apart inside its warp tile instead of 64 apart in the block tile.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N; block 256 threads computing a 128×128 tile of C.
#include "kernels/launchers.h"
#include "kernels/register_tile.cuh"

namespace gemm::detail {
namespace {

constexpr int kBm = 128, kBn = 128, kBk = 8, kStages = 2;  // block tile
constexpr int kWm = 64, kWn = 32;                          // warp tile
constexpr int kTm = 8, kTn = 8;                            // thread tile
constexpr int kWarpsN = kBn / kWn;
constexpr int kLanesM = kWm / kTm, kLanesN = kWn / kTn;  // thread tiles in a warp tile
constexpr int kThreads = 32 * (kBm / kWm) * kWarpsN;
constexpr int kLds = kBm + 4;
constexpr int kTileFloats = kBk * kLds;
static_assert(kBm == kBn, "one row stride serves both tiles");
static_assert(kBm % kWm == 0 && kBn % kWn == 0, "warp tiles must tile the block tile");
static_assert(kLanesM * kLanesN == 32, "a warp tile is covered by exactly 32 thread tiles");
static_assert(kThreads == 256, "8 warps of 64×32 cover the 128×128 tile");
static_assert(2 * kStages * kTileFloats * sizeof(float) <= 48 * 1024,
              "static shared memory is limited to 48 KB");
// Lane (ly, lx) of a warp owns rows ly·4 + {0, 32} + 0..3 and columns lx·4 + {0, 16} + 0..3 of
// its warp tile.
using Tile = RegisterTile<kTm, kTn, 4 * kLanesM, 4 * kLanesN>;

template <bool KMajorA, bool KMajorB>
__global__ void __launch_bounds__(kThreads)
    warptile_kernel(Operand<KMajorA> a, Operand<KMajorB> b, Epilogue c) {
  __shared__ __align__(16) float a_tiles[kStages][kTileFloats];  // a_tiles[stage][k][m]
  __shared__ __align__(16) float b_tiles[kStages][kTileFloats];  // b_tiles[stage][k][n]
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int m0 = blockIdx.y * kBm, n0 = blockIdx.x * kBn;
  const int warp_row = (warp / kWarpsN) * kWm, warp_col = (warp % kWarpsN) * kWn;
  const int row0 = warp_row + (lane / kLanesN) * 4, col0 = warp_col + (lane % kLanesN) * 4;

  Tile tile;
  multiply_pipelined<kBk, kBm, kBn, kLds, kThreads, kStages>(tile, a_tiles, b_tiles, a, b, m0, n0,
                                                             row0, col0, tid);
  tile.store(c, m0, n0, row0, col0);
}

}  // namespace

void launch_warptile(const Problem& p, cudaStream_t stream) {
  launch_for_layout(p, tile_grid<kBm, kBn>(p), dim3(kThreads), stream,
                    KERNEL_FOR_LAYOUT(warptile_kernel));
}

}  // namespace gemm::detail
