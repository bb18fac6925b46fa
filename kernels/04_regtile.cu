// Step 4 — register blocking. Each thread computes an 8×8 tile of C held in registers; per k it
// reads 8 values of A and 8 of B from shared memory as four float4 and does 64 FMAs with them, so
// shared-memory traffic per FMA drops 8× compared with step 3's one-value-per-FMA reuse of A.
// The block tile grows to 128×128 (BK = 8) to feed 256 such threads.
// Change from 03: ThreadTile (thread_tile.cuh) replaces the one float4 accumulator; tiles are
// still loaded with load_tile_vec4, synchronously.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N; block 16×16 threads computing a 128×128 tile of C.
#include "kernels/launchers.h"
#include "kernels/thread_tile.cuh"

namespace gemm::detail {
namespace {

constexpr int kBm = 128, kBn = 128, kBk = 8;
constexpr int kTm = 8, kTn = 8;
constexpr int kThreadsX = kBn / kTn, kThreadsY = kBm / kTm;
constexpr int kThreads = kThreadsX * kThreadsY;
constexpr int kLds =
    kBm + 4;  // ≡ 4 (mod 32) banks: the transposed stores of load_tile_vec4 don't collide
static_assert(kBm == kBn, "one row stride serves both tiles");
static_assert(kThreads == 256, "16×16 threads of 8×8 outputs cover the 128×128 tile");
// Thread (ty, tx) owns rows ty·4 + {0, 64} + 0..3 and columns tx·4 + {0, 64} + 0..3.
using Tile = ThreadTile<kTm, kTn, kBm / 2, kBn / 2>;

template <bool KCA, bool KCB>
__global__ void __launch_bounds__(kThreads)
    regtile_kernel(Operand<KCA> a, Operand<KCB> b, Epilogue c) {
  __shared__ __align__(16) float a_tile[kBk * kLds];  // a_tile[k][m]
  __shared__ __align__(16) float b_tile[kBk * kLds];  // b_tile[k][n]
  const int tid = threadIdx.y * kThreadsX + threadIdx.x;
  const int m0 = blockIdx.y * kBm, n0 = blockIdx.x * kBn;
  const int row0 = threadIdx.y * 4, col0 = threadIdx.x * 4;

  Tile tile;
  for (int k0 = 0; k0 < a.extent_k; k0 += kBk) {
    load_tile_vec4<kBk, kBm, kLds, kThreads>(a_tile, a, m0, k0, tid);
    load_tile_vec4<kBk, kBn, kLds, kThreads>(b_tile, b, n0, k0, tid);
    __syncthreads();
    tile.multiply<kBk, kLds, kLds>(a_tile, b_tile, row0, col0);
    __syncthreads();
  }
  tile.store(c, m0, n0, row0, col0);
}

}  // namespace

void launch_regtile(const Problem& p, cudaStream_t stream) {
  launch_for_layout(p, tile_grid<kBm, kBn>(p), dim3(kThreadsX, kThreadsY), stream,
                    [](auto a_kc, auto b_kc) {
                      return regtile_kernel<decltype(a_kc)::value, decltype(b_kc)::value>;
                    });
}

}  // namespace gemm::detail
