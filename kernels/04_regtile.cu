// Step 4 — register blocking. Each thread computes an 8×8 tile of C held in registers. Per k it
// reads 8 values of A and 8 of B from shared memory, as four float4, and does the 64 FMAs of
// their outer product: each value read feeds 8 FMAs, where step 3's A value fed 4 and its B
// values 1. The block tile grows to 128×128 (BK = 8) to feed 256 such threads.
// Change from 03: the accumulator becomes an 8×8 RegisterTile (register_tile.cuh); both shared
// tiles are MN-major, so that a thread's values at one k are contiguous.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N; block 16×16 threads computing a 128×128 tile of C.
#include "kernels/launchers.h"
#include "kernels/register_tile.cuh"

namespace gemm::detail {
namespace {

constexpr int kBm = 128, kBn = 128, kBk = 8;
constexpr int kTm = 8, kTn = 8;
constexpr int kThreadsX = kBn / kTn, kThreadsY = kBm / kTm;
constexpr int kThreads = kThreadsX * kThreadsY;
constexpr int kLds = kBm + 4;  // ≡ 4 (mod 32) banks: the transposed stores of a K-major operand
                               // don't collide
static_assert(kBm == kBn, "one row stride serves both tiles");
static_assert(kThreads == 256, "16×16 threads of 8×8 outputs cover the 128×128 tile");
// Thread (ty, tx) owns rows ty·4 + {0, 64} + 0..3 and columns tx·4 + {0, 64} + 0..3.
using Tile = RegisterTile<kTm, kTn, kBm / 2, kBn / 2>;

template <bool KMajorA, bool KMajorB>
__global__ void __launch_bounds__(kThreads)
    regtile_kernel(Operand<KMajorA> a, Operand<KMajorB> b, Epilogue c) {
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
    tile.multiply<kBk, kLds>(a_tile, b_tile, row0, col0);
    // TUTORIAL: the call above is the register-blocked outer product, per k of the tile:
    //   for (int kk = 0; kk < kBk; ++kk) {
    //     float a[8], b[8];  // this thread's rows of A and columns of B at kk: 2 float4 each
    //     for (int i = 0; i < 8; ++i) a[i] = a_tile[kk * kLds + row0 + Tile::row(i)];
    //     for (int j = 0; j < 8; ++j) b[j] = b_tile[kk * kLds + col0 + Tile::col(j)];
    //     for (int i = 0; i < 8; ++i)
    //       for (int j = 0; j < 8; ++j) tile.acc[i][j] += a[i] * b[j];  // 64 FMAs, 16 reads
    //   }
    __syncthreads();
  }
  tile.store(c, m0, n0, row0, col0);
}

}  // namespace

void launch_regtile(const Problem& p, cudaStream_t stream) {
  launch_for_layout(p, tile_grid<kBm, kBn>(p), dim3(kThreadsX, kThreadsY), stream,
                    KERNEL_FOR_LAYOUT(regtile_kernel));
}

}  // namespace gemm::detail
