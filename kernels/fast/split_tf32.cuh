// The 3×TF32 arithmetic of production's mma.sync kernels (fast/mma_sync_tiles.cuh, for
// tf32x3_fast, and tf32_fast's tuning): each fp32 value split into a TF32 high part and a TF32
// remainder, three mma.sync per fragment pair. Step 10 (10_tf32x3.cu) writes the same arithmetic
// in its own file, where it is the idea; this is production's copy, with mma_sync.cuh's
// interface (Fragment, from, mma) so that it slots in where mma_ops::Tf32x1 does.
#pragma once

#include "kernels/mma_sync.cuh"

namespace gemm::detail::mma_ops {

// Three TF32 products per fragment pair: x = hi + lo, hi = tf32(x), lo = tf32(x − hi).
struct Tf32x3 {
  template <int N>
  struct Fragment {
    uint32_t hi[N], lo[N];
  };
  template <int N>
  __device__ __forceinline__ static Fragment<N> from(const float (&v)[N]) {
    Fragment<N> f;
#pragma unroll
    for (int e = 0; e < N; ++e) {
      f.hi[e] = to_tf32(v[e]);
      f.lo[e] = to_tf32(v[e] - __uint_as_float(f.hi[e]));  // exact in fp32, then rounded
    }
    return f;
  }
  // The small products first, so that they are not rounded away against the large one.
  __device__ __forceinline__ static void mma(float (&acc)[4], const Fragment<4>& a,
                                             const Fragment<2>& b) {
    mma_tf32(acc, a.lo, b.hi);
    mma_tf32(acc, a.hi, b.lo);
    mma_tf32(acc, a.hi, b.hi);
  }
};

}  // namespace gemm::detail::mma_ops
