// Step 7 — tensor cores. Each warp multiplies its warp tile with mma.sync m16n8k8 TF32
// instructions (inputs rounded to TF32's 10-bit mantissa, products accumulated in fp32), which do
// 16·8·8 multiply-adds per instruction instead of one FMA per thread. Results differ from fp32 by
// about 1e-3 relative: an explicit choice (variant tf32), never a substitute for an fp32 variant.
// Change from 06: the thread tile becomes per-warp MMA fragments read straight from shared memory.
// Each operand's tile is kept in its global layout (K-major for a K-major operand, MN-major
// otherwise), so every cp.async is 16 bytes wide, and the padding (4 or 8 floats) makes each
// fragment read conflict-free. BK grows to 32; 3 stages. The kernel is in mma_sync.cuh, shared
// with step 10; this file gives it its arithmetic: each value rounded to TF32 once, one mma.sync.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#include "kernels/launchers.h"
#include "kernels/mma_sync.cuh"

namespace gemm::detail {
namespace {

// One TF32 product per fragment pair: each fp32 value rounded to TF32 (10-bit mantissa) once.
struct RoundedTf32 {
  template <int N>
  struct Fragment {
    uint32_t x[N];
  };
  template <int N>
  __device__ __forceinline__ static Fragment<N> from(const float (&v)[N]) {
    Fragment<N> f;
#pragma unroll
    for (int e = 0; e < N; ++e) f.x[e] = to_tf32(v[e]);
    return f;
  }
  __device__ __forceinline__ static void mma(float (&acc)[4], const Fragment<4>& a,
                                             const Fragment<2>& b) {
    mma_tf32(acc, a.x, b.x);
  }
};

using LargeTile = MmaConfig<128, 128, 32, 64, 32, 3>;  // 8 warps, 64×32 each
using SmallTile = MmaConfig<64, 64, 32, 32, 32, 3>;    // 4 warps, 32×32 each

// scripts/tune/ includes this file to time other configs of this step.
template <class Large, class Small>
void launch_tf32_tiles(const Problem& p, cudaStream_t stream) {
  launch_mma_sync_tiles<Large, Small, RoundedTf32>(p, stream);
}

}  // namespace

// In the library only: a tune candidate (scripts/tune/) including this file must not define
// these again.
#ifndef GEMM_TUNE_CANDIDATE
void launch_tf32_mma(const Problem& p, cudaStream_t stream) {
  launch_tf32_tiles<LargeTile, SmallTile>(p, stream);
}
#endif

}  // namespace gemm::detail
