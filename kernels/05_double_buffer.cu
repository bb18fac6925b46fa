// Step 5 — double buffering. Two shared buffers per operand: while the block multiplies K tile t,
// cp.async copies tile t+1 into the other buffer, so global-memory latency hides behind the FMAs
// instead of stalling every thread at each tile boundary. One barrier per tile instead of two.
// Change from 04: the K loop becomes pipelined_k_loop<2> (pipeline.cuh) and the loads become
// cp_async_tile_kmajor; the thread tile and its mapping are unchanged.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N; block 16×16 threads computing a 128×128 tile of C.
#include "kernels/launchers.h"
#include "kernels/pipeline.cuh"
#include "kernels/thread_tile.cuh"

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
using Tile = ThreadTile<kTm, kTn, kBm / 2, kBn / 2>;

template <bool KCA, bool KCB>
__global__ void __launch_bounds__(kThreads)
    double_buffer_kernel(Operand<KCA> a, Operand<KCB> b, Epilogue c) {
  __shared__ __align__(16) float a_tiles[kStages][kTileFloats];  // a_tiles[s][k][m]
  __shared__ __align__(16) float b_tiles[kStages][kTileFloats];  // b_tiles[s][k][n]
  const int tid = threadIdx.y * kThreadsX + threadIdx.x;
  const int m0 = blockIdx.y * kBm, n0 = blockIdx.x * kBn;
  const int row0 = threadIdx.y * 4, col0 = threadIdx.x * 4;

  Tile tile;
  pipelined_k_loop<kStages>(
      (a.extent_k + kBk - 1) / kBk,
      [&](int stage, int kt) {
        cp_async_tile_kmajor<kBk, kBm, kLds, kThreads>(a_tiles[stage], a, m0, kt * kBk, tid);
        cp_async_tile_kmajor<kBk, kBn, kLds, kThreads>(b_tiles[stage], b, n0, kt * kBk, tid);
      },
      [&](int stage) {
        tile.multiply<kBk, kLds, kLds>(a_tiles[stage], b_tiles[stage], row0, col0);
      });
  tile.store(c, m0, n0, row0, col0);
}

}  // namespace

void launch_double_buffer(const Problem& p, cudaStream_t stream) {
  launch_for_layout(p, tile_grid<kBm, kBn>(p), dim3(kThreadsX, kThreadsY), stream,
                    [](auto a_kc, auto b_kc) {
                      return double_buffer_kernel<decltype(a_kc)::value, decltype(b_kc)::value>;
                    });
}

}  // namespace gemm::detail
