// Step 2 — tiled. The block stages a 32×32 tile of op(A) and of op(B) in shared memory, then
// every thread reads its row of A and column of B from there: each global element is loaded once
// per block instead of once per thread. __syncthreads() fences each tile before and after use.
// Change from 01: shared-memory staging; one element of C per thread as before. A's tile is kept
// row by row (a_tile[m][k], as in the chapter): a warp shares one row, and the compiler reads four
// of its k at once with one broadcast 128-bit load. The chapter used 16×16 tiles; 32×32 halves the
// loads, stores and barriers per FMA (docs/NOTES.md, "2. tiled").
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N; block 32×32 threads, one per element of a 32×32
//   tile of C.
//
// Run it (a build in build/, scripts/train.sh makes one):
//   build/apps/gemm_bench/gemm_bench --variants naive,tiled --shapes 4096
//   scripts/train.sh --gemm tiled --epochs 2
#include "kernels/common.cuh"
#include "kernels/launchers.h"

namespace gemm::detail {
namespace {

constexpr int kTile = 32;
constexpr int kThreads = kTile * kTile;
constexpr int kLdsA = kTile + 4;  // rows of a_tile stay 16-byte aligned for the 128-bit reads
constexpr int kLdsB = kTile + 1;  // odd stride: a K-major B's transposed stores avoid conflicts

template <bool KMajorA, bool KMajorB>
__global__ void __launch_bounds__(kThreads)
    tiled_kernel(Operand<KMajorA> a, Operand<KMajorB> b, Epilogue c) {
  __shared__ __align__(16) float a_tile[kTile * kLdsA];  // a_tile[m][k]
  __shared__ float b_tile[kTile * kLdsB];                // b_tile[k][n]
  const int tid = threadIdx.y * kTile + threadIdx.x;
  const int m0 = blockIdx.y * kTile, n0 = blockIdx.x * kTile;

  float acc = 0.0f;
  for (int k0 = 0; k0 < a.extent_k; k0 += kTile) {
    load_tile<kTile, kTile, kLdsA, kThreads, TileLayout::KMajor>(a_tile, a, m0, k0, tid);
    load_tile<kTile, kTile, kLdsB, kThreads>(b_tile, b, n0, k0, tid);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTile; ++kk)
      acc += a_tile[threadIdx.y * kLdsA + kk] * b_tile[kk * kLdsB + threadIdx.x];
    __syncthreads();
  }
  c.store(m0 + threadIdx.y, n0 + threadIdx.x, acc);
}

}  // namespace

void launch_tiled(const Problem& p, cudaStream_t stream) {
  launch_for_layout(p, tile_grid<kTile, kTile>(p), dim3(kTile, kTile), stream,
                    KERNEL_FOR_LAYOUT(tiled_kernel));
}

}  // namespace gemm::detail
