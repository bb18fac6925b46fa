// Step 3 — vectorised. 128-bit float4 accesses at every level: tiles come from global memory as
// float4 (Operand::load4 falls back to scalar loads where a float4 would be misaligned or cross an
// edge); in shared memory a thread reads four k of its row of A as one float4 and four columns of
// B as another, and it owns one float4 of C, written with a single 128-bit store where aligned.
// Change from 02: a thread computes 1×4 elements of C instead of 1, so each A value read from
// shared memory feeds 4 FMAs, and there are a quarter as many load instructions per tile.
// The K tile stays 32 deep, as in step 2: with 16 the block waits at a barrier every 16 k with
// only its 8 warps' loads in flight, and it trained more slowly than step 2 (docs/NOTES.md).
// The chapter's printed version indexed past its shared tiles; here the tile strides are
// static_asserted and every index stays inside its tile.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N; block 16×16 threads computing a 16×64 tile of C.
//
// Run it (a build in build/, scripts/train.sh makes one):
//   build/apps/gemm_bench/gemm_bench --variants tiled,vec --shapes 4096
//   scripts/train.sh --gemm vec --epochs 2
#include "kernels/common.cuh"
#include "kernels/launchers.h"

namespace gemm::detail {
namespace {

constexpr int kBm = 16, kBn = 64, kBk = 32;
constexpr int kThreadsX = kBn / 4, kThreadsY = kBm;
constexpr int kThreads = kThreadsX * kThreadsY;
constexpr int kLdsA = kBk + 4, kLdsB = kBn + 4;  // padded, and multiples of 4 for float4 access
static_assert(kThreads == 256, "one float4 of C per thread over a 16×64 tile is 256 threads");

template <bool KMajorA, bool KMajorB>
__global__ void __launch_bounds__(kThreads)
    vec_kernel(Operand<KMajorA> a, Operand<KMajorB> b, Epilogue c) {
  __shared__ __align__(16) float a_tile[kBm * kLdsA];  // a_tile[m][k]
  __shared__ __align__(16) float b_tile[kBk * kLdsB];  // b_tile[k][n]
  const int tid = threadIdx.y * kThreadsX + threadIdx.x;
  const int m0 = blockIdx.y * kBm, n0 = blockIdx.x * kBn;

  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int k0 = 0; k0 < a.extent_k; k0 += kBk) {
    load_tile_vec4<kBk, kBm, kLdsA, kThreads, TileLayout::KMajor>(a_tile, a, m0, k0, tid);
    load_tile_vec4<kBk, kBn, kLdsB, kThreads>(b_tile, b, n0, k0, tid);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBk; kk += 4) {
      const float4 a4 = *reinterpret_cast<const float4*>(&a_tile[threadIdx.y * kLdsA + kk]);
      const float av[4] = {a4.x, a4.y, a4.z, a4.w};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float4 bv =
            *reinterpret_cast<const float4*>(&b_tile[(kk + j) * kLdsB + 4 * threadIdx.x]);
        acc.x += av[j] * bv.x;
        acc.y += av[j] * bv.y;
        acc.z += av[j] * bv.z;
        acc.w += av[j] * bv.w;
      }
    }
    __syncthreads();
  }
  c.store4(m0 + threadIdx.y, n0 + 4 * threadIdx.x, acc);
}

}  // namespace

void launch_vec(const Problem& p, cudaStream_t stream) {
  launch_for_layout(p, tile_grid<kBm, kBn>(p), dim3(kThreadsX, kThreadsY), stream,
                    KERNEL_FOR_LAYOUT(vec_kernel));
}

}  // namespace gemm::detail
