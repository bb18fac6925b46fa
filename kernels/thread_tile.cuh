// The register-blocked inner product and epilogue shared by the SIMT variants 04–06.
//
// A thread owns a TM×TN tile of C in registers, split into float4-wide groups: rows
//   row0 + g·kRowStep + {0,1,2,3}  for g < TM/4,   columns col0 + h·kColStep + {0,1,2,3}
// for h < TN/4. Spreading the groups (rather than giving a thread TM consecutive rows) makes the
// float4 fragment reads of neighbouring threads contiguous in shared memory: no bank conflicts.
#pragma once

#include "kernels/common.cuh"

namespace gemm::detail {

template <int TM, int TN, int kRowStep, int kColStep>
struct ThreadTile {
  static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are made of float4 groups");
  float acc[TM][TN] = {};

  // acc += Σ_kk a_tile[kk][rows] ⊗ b_tile[kk][cols] over one K-major shared tile pair.
  template <int BK, int LDA, int LDB>
  __device__ __forceinline__ void multiply(const float* a_tile, const float* b_tile, int row0,
                                           int col0) {
    static_assert(LDA % 4 == 0 && LDB % 4 == 0, "float4 fragment reads need 16-byte rows");
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], b[TN];
#pragma unroll
      for (int g = 0; g < TM / 4; ++g)
        *reinterpret_cast<float4*>(&a[4 * g]) =
            *reinterpret_cast<const float4*>(&a_tile[kk * LDA + row0 + g * kRowStep]);
#pragma unroll
      for (int h = 0; h < TN / 4; ++h)
        *reinterpret_cast<float4*>(&b[4 * h]) =
            *reinterpret_cast<const float4*>(&b_tile[kk * LDB + col0 + h * kColStep]);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
  }

  // Writes the tile to C at the block's origin (m0, n0), float4 per group where it fits.
  __device__ __forceinline__ void store(const Epilogue& c, int m0, int n0, int row0,
                                        int col0) const {
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int row = m0 + row0 + (i / 4) * kRowStep + i % 4;
#pragma unroll
      for (int h = 0; h < TN / 4; ++h)
        c.store4(
            row, n0 + col0 + h * kColStep,
            make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2], acc[i][4 * h + 3]));
    }
  }
};

}  // namespace gemm::detail
