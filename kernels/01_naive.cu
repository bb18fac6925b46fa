// Step 1 — naive. One thread per element of C; each runs the whole K loop straight from global
// memory. threadIdx.x walks the columns of C, so a warp reads a row of B (op N) coalesced and one
// element of A broadcast. Nothing is reused across threads except by the caches.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N; block 32×8 threads, one per element of a 8×32
//   tile of C.
//
// Run it (a build in build/, scripts/train.sh makes one):
//   build/apps/gemm_bench/gemm_bench --variants naive --shapes 4096
//   scripts/train.sh --gemm naive --epochs 2
#include "kernels/common.cuh"
#include "kernels/launchers.h"

namespace gemm::detail {
namespace {

constexpr int kBlockX = 32;  // columns of C per block: a warp spans a row segment
constexpr int kBlockY = 8;   // rows of C per block

template <bool KMajorA, bool KMajorB>
__global__ void naive_kernel(Operand<KMajorA> a, Operand<KMajorB> b, Epilogue c) {
  const int row = blockIdx.y * kBlockY + threadIdx.y;
  const int col = blockIdx.x * kBlockX + threadIdx.x;
  if (row >= c.m || col >= c.n) return;
  float acc = 0.0f;
  for (int k = 0; k < a.extent_k; ++k) acc += a.get(row, k) * b.get(col, k);
  c.store(row, col, acc);
}

}  // namespace

void launch_naive(const Problem& p, cudaStream_t stream) {
  launch_for_layout(p, tile_grid<kBlockY, kBlockX>(p), dim3(kBlockX, kBlockY), stream,
                    KERNEL_FOR_LAYOUT(naive_kernel));
}

}  // namespace gemm::detail
