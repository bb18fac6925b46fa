// Step 5 — double buffering. Two shared buffers per operand: while the block multiplies K tile t,
// cp.async copies tile t+1 into the other buffer, so global-memory latency hides behind the FMAs
// instead of stalling every thread at each tile boundary. One barrier per tile instead of two.
// Change from 04: the K loop becomes multiply_pipelined (register_tile.cuh) with two stages, its
// copies cp_async_tile_mn_major (pipeline.cuh); the thread tile and its mapping are unchanged.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N; block 16×16 threads computing a 128×128 tile of C.
#include "kernels/launchers.h"
#include "kernels/register_tile.cuh"

namespace gemm::detail {
namespace {

constexpr int kBm = 128, kBn = 128, kBk = 8, kStages = 2;
constexpr int kTm = 8, kTn = 8;
constexpr int kThreadsX = kBn / kTn, kThreadsY = kBm / kTm;
constexpr int kThreads = kThreadsX * kThreadsY;
constexpr int kLds = kBm + 4;
constexpr int kTileFloats = kBk * kLds;
static_assert(kBm == kBn, "one row stride serves both tiles");
static_assert(kThreads == 256, "16×16 threads of 8×8 outputs cover the 128×128 tile");
static_assert(2 * kStages * kTileFloats * sizeof(float) <= 48 * 1024,
              "static shared memory is limited to 48 KB");
// Thread (ty, tx) owns rows ty·4 + {0, 64} + 0..3 and columns tx·4 + {0, 64} + 0..3.
using Tile = RegisterTile<kTm, kTn, kBm / 2, kBn / 2>;

template <bool KMajorA, bool KMajorB>
__global__ void __launch_bounds__(kThreads)
    double_buffer_kernel(Operand<KMajorA> a, Operand<KMajorB> b, Epilogue c) {
  __shared__ __align__(16) float a_tiles[kStages][kTileFloats];  // a_tiles[stage][k][m]
  __shared__ __align__(16) float b_tiles[kStages][kTileFloats];  // b_tiles[stage][k][n]
  const int tid = threadIdx.y * kThreadsX + threadIdx.x;
  const int m0 = blockIdx.y * kBm, n0 = blockIdx.x * kBn;
  const int row0 = threadIdx.y * 4, col0 = threadIdx.x * 4;

  Tile tile;
  multiply_pipelined<kBk, kBm, kBn, kLds, kThreads, kStages>(tile, a_tiles, b_tiles, a, b, m0, n0,
                                                             row0, col0, tid);
  // TUTORIAL: with two stages the call above is, load(s, kt) copying K tile kt of A and B into
  // a_tiles[s] and b_tiles[s] with cp_async_tile_mn_major, and multiply(s) being tile.multiply:
  //   load(0, 0); cp_async_commit();
  //   for (int kt = 0; kt < k_tiles; ++kt) {
  //     cp_async_wait<0>(); __syncthreads();  // tile kt has landed; buffer (kt+1)%2 is free
  //     if (kt + 1 < k_tiles) load((kt + 1) % 2, kt + 1);  // copies while tile kt multiplies
  //     cp_async_commit();
  //     multiply(kt % 2);
  //   }
  tile.store(c, m0, n0, row0, col0);
}

}  // namespace

void launch_double_buffer(const Problem& p, cudaStream_t stream) {
  launch_for_layout(p, tile_grid<kBm, kBn>(p), dim3(kThreadsX, kThreadsY), stream,
                    KERNEL_FOR_LAYOUT(double_buffer_kernel));
}

}  // namespace gemm::detail
