// The thread's tile of C in registers, shared by the register-blocked steps 4–6, and the
// double-buffered K loop of steps 5 and 6.
//
// A thread owns TM×TN outputs of C. Its rows are TM/4 groups of 4 consecutive rows, kRowGap
// apart, from row0: row0 + row(i). Its columns likewise, kColGap apart, from col0. Both shared
// tiles are MN-major (tile[k][x], x contiguous), so at one k a thread reads its A values and its
// B values as float4s, one per group, and adds their outer product to acc. Groups spread out
// rather than adjacent keep neighbouring threads' float4 reads on neighbouring addresses, which
// is conflict-free (docs/KERNELS.md, "4. regtile").
#pragma once

#include "kernels/pipeline.cuh"

namespace gemm::detail {

template <int TM, int TN, int kRowGap, int kColGap>
struct RegisterTile {
  static_assert(TM % 4 == 0 && TN % 4 == 0, "a thread's rows and columns come in float4 groups");
  static_assert(kRowGap % 4 == 0 && kColGap % 4 == 0, "groups start on 16-byte boundaries");
  float acc[TM][TN] = {};

  __host__ __device__ static constexpr int row(int i) { return (i / 4) * kRowGap + i % 4; }
  __host__ __device__ static constexpr int col(int j) { return (j / 4) * kColGap + j % 4; }

  // acc[i][j] += Σ_kk a_tile[kk][row0 + row(i)] · b_tile[kk][col0 + col(j)] over one K tile of BK,
  // both tiles with row stride LDS.
  template <int BK, int LDS>
  __device__ __forceinline__ void multiply(const float* a_tile, const float* b_tile, int row0,
                                           int col0) {
    static_assert(LDS % 4 == 0, "float4 reads need 16-byte rows");
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], b[TN];
      read_groups<TM, kRowGap>(a, &a_tile[kk * LDS + row0]);
      read_groups<TN, kColGap>(b, &b_tile[kk * LDS + col0]);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
  }

  // C at the block's origin (m0, n0) ← the tile through the epilogue, a float4 per column group.
  __device__ __forceinline__ void store(const Epilogue& c, int m0, int n0, int row0,
                                        int col0) const {
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int h = 0; h < TN / 4; ++h)
        c.store4(
            m0 + row0 + row(i), n0 + col0 + h * kColGap,
            make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2], acc[i][4 * h + 3]));
  }

 private:
  // values[4g + e] = line[g·kGap + e]: X values in X/4 float4 groups kGap apart.
  template <int X, int kGap>
  __device__ __forceinline__ static void read_groups(float (&values)[X], const float* line) {
#pragma unroll
    for (int g = 0; g < X / 4; ++g) {
      const float4 v = *reinterpret_cast<const float4*>(&line[g * kGap]);
      values[4 * g] = v.x;
      values[4 * g + 1] = v.y;
      values[4 * g + 2] = v.z;
      values[4 * g + 3] = v.w;
    }
  }
};

// The K loop of steps 5 and 6: Stages buffers per operand, a_tiles[stage] and b_tiles[stage] each
// an MN-major BK×BM (BK×BN) tile of row stride LDS, filled by cp.async (pipeline.cuh) while
// `tile` multiplies a tile that has already landed. NT threads, tid = the thread's index.
template <int BK, int BM, int BN, int LDS, int NT, int Stages, class Tile, bool KMajorA,
          bool KMajorB>
__device__ __forceinline__ void multiply_pipelined(Tile& tile, float (*a_tiles)[BK * LDS],
                                                   float (*b_tiles)[BK * LDS],
                                                   const Operand<KMajorA>& a,
                                                   const Operand<KMajorB>& b, int m0, int n0,
                                                   int row0, int col0, int tid) {
  pipelined_k_loop<Stages>(
      (a.extent_k + BK - 1) / BK,
      [&](int stage, int kt) {
        cp_async_tile_mn_major<BK, BM, LDS, NT>(a_tiles[stage], a, m0, kt * BK, tid);
        cp_async_tile_mn_major<BK, BN, LDS, NT>(b_tiles[stage], b, n0, kt * BK, tid);
      },
      [&](int stage) {
        tile.template multiply<BK, LDS>(a_tiles[stage], b_tiles[stage], row0, col0);
      });
}

}  // namespace gemm::detail
