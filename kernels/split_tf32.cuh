// Step 10's arithmetic for the mma_sync kernel (mma_sync.cuh): each fp32 value split into a TF32
// high part and a TF32 remainder, three mma.sync per fragment pair (10_tf32x3.cu has the idea).
// Shared by step 10 and the production variant tf32x3_fast (fast/tf32x3_fast.cu).
#pragma once

#include "kernels/mma_sync.cuh"

namespace gemm::detail {

struct SplitTf32 {
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

}  // namespace gemm::detail
