// Step 11 — step 10's fp32-accurate 3×TF32 on step 9's Hopper machinery. wgmma reads its operands
// from shared memory, not registers, so the remainders must be there too: each stage gains a
// second part, the same swizzled A and B tiles holding lo(x) = tf32(x − trunc(x)). The high part
// is the landed tile itself, which the tensor cores read as trunc(x), its top 19 bits; hi + lo
// then carries x to about 2⁻²¹ relative. The consumers write the remainders of each stage as it
// lands (each thread a share, then a barrier among them), while the tensor cores still run the
// previous tile's batch, and issue three wgmma per step: lo_a·hi_b, hi_a·lo_b, hi_a·hi_b.
// Change from 09: the arithmetic and the tiles. The producer and its TMA copies are 09's; a stage
// is twice the size, so the block tile is 128×128 in 3 stages (2 for TN, whose two operands both
// need staging slots): 256×128 stages of 96 KB would fit only twice, and not at all beside TN's.
// Inputs must be finite: an infinite x gives lo = ∞ − ∞ = NaN.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#include "kernels/launchers.h"
#include "kernels/wgmma_ws.cuh"

namespace gemm::detail {
namespace {

struct SplitTf32 {
  static constexpr int kParts = 2;  // the tiles as loaded (hi), then their remainders (lo)

  // x − trunc(x), the bits the tensor cores drop, is exact in fp32; rounded to TF32 it is lo.
  __device__ __forceinline__ static float remainder(float x) {
    const float hi = __uint_as_float(__float_as_uint(x) & 0xFFFFE000u);  // top 19 bits
    return __uint_as_float(to_tf32(x - hi));
  }
  // The stage's first part (A and B tiles, kPartFloats floats) → its second part, right after it;
  // this thread's share of kThreads, in float4s (the remainders keep the tiles' swizzle).
  template <int kPartFloats, int kThreads>
  __device__ __forceinline__ static void prepare(float* part, int tid) {
    static_assert(kPartFloats % (4 * kThreads) == 0, "every thread takes the same float4 count");
#pragma unroll
    for (int i = 4 * tid; i < kPartFloats; i += 4 * kThreads) {
      const float4 x = *reinterpret_cast<const float4*>(part + i);
      *reinterpret_cast<float4*>(part + kPartFloats + i) =
          make_float4(remainder(x.x), remainder(x.y), remainder(x.z), remainder(x.w));
    }
  }
  // The small products first, so that they are not rounded away against the large one.
  template <int kPartFloats>
  __device__ __forceinline__ static void mma(float (&d)[64], const float* a, const float* b) {
    wgmma_m64n128k8(d, sw128_descriptor(a + kPartFloats), sw128_descriptor(b));
    wgmma_m64n128k8(d, sw128_descriptor(a), sw128_descriptor(b + kPartFloats));
    wgmma_m64n128k8(d, sw128_descriptor(a), sw128_descriptor(b));
  }
};

// 128×128, two consumers of 64×128, 3 stages of 64 KB: both for full grids and, with split-K,
// for small ones.
using Tile = WsConfig<128, 128, 3, 2, SplitTf32>;

}  // namespace

void launch_tf32x3_ws(const Problem& p, cudaStream_t stream) {
  launch_wgmma_ws_tiles<Tile, Tile>(p, stream);
}

}  // namespace gemm::detail
