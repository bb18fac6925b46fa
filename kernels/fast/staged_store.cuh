// The cluster sum's store, for the production kernels (fast/): each thread takes one float4
// column of rows first, first + S·kRowsPerPass, …, loads those rows of every slice's partial
// before its first store, sums them in order q = 0, 1, …, and stores them through the epilogue.
// The ladder's store_staged_tile (common.cuh) stores a row before loading the next: C and the
// partials' generic addresses might alias, so each store holds back the next load, a round trip
// through distributed shared memory per row and slice. An unsplit tile keeps that store: batched
// the same way (all of a thread's rows, 32 float4 on the large tile), it ran 1.08–1.16× slower on
// the large grids (H200, docs/results/archive/small_m_candidates_warm.csv, c4).
#pragma once

#include "kernels/common.cuh"

namespace gemm::detail {

// The shares of one BM×BN tile (row stride LD) that thread `tid` of NT sums and stores, S of them;
// its rows are first, first + S·kRowsPerPass, … (kRowsPerPass = NT / (BN/4) threads a pass).
template <int S, int BM, int BN, int LD, int NT>
__device__ __forceinline__ void sum_rows_and_store(const float* const (&shares)[S],
                                                   const Epilogue& c, int first, int m0, int n0,
                                                   int tid) {
  static_assert(BN % 4 == 0 && LD % 4 == 0 && NT % (BN / 4) == 0,
                "a row is read a float4 at a time by a whole number of row groups of threads");
  constexpr int kRowsPerPass = NT / (BN / 4);
  constexpr int kRows = (BM + S * kRowsPerPass - 1) / (S * kRowsPerPass);  // per thread, at most
  const int col = (tid % (BN / 4)) * 4;
  float4 sum[kRows];
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const int r = first + i * kRowsPerPass * S;
    sum[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (r >= BM) continue;
#pragma unroll
    for (int q = 0; q < S; ++q) {
      const float4 v = *reinterpret_cast<const float4*>(shares[q] + r * LD + col);
      sum[i].x += v.x;
      sum[i].y += v.y;
      sum[i].z += v.z;
      sum[i].w += v.w;
    }
  }
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const int r = first + i * kRowsPerPass * S;
    if (r < BM) c.store4(m0 + r, n0 + col, sum[i]);
  }
}

}  // namespace gemm::detail
