// The thread's tile of C in registers, shared by the register-blocked steps 4–6, the
// register-staged tile loads of steps 5 and 6, and step 5's double-buffered K loop with step 6's
// sliced K (05_dbuf.cu writes the loop out; step 6 calls it here).
//
// A thread owns TM×TN outputs of C. Its rows are TM/4 groups of 4 consecutive rows, kRowGap
// apart, from row0: row0 + row(i). Its columns likewise, kColGap apart, from col0. Both shared
// tiles are MN-major (tile[k][x], x contiguous), so at one k a thread reads its A values and its
// B values as float4s, one per group, and adds their outer product to acc. Groups spread out
// rather than adjacent keep neighbouring threads' float4 reads on neighbouring addresses, which
// is conflict-free (docs/NOTES.md, "4. regtile").
#pragma once

#include "kernels/common.cuh"

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

  // For a block whose threads form Slices groups that each multiplied a slice of every K tile:
  // the groups' tiles are summed into slice 0's, in the order Slices − 1, …, 1 (deterministic),
  // through `partial`, a BM×BN tile of row stride LD in shared memory. Every thread calls this.
  template <int Slices, int LD>
  __device__ __forceinline__ void sum_k_slices(float* partial, int slice, int row0, int col0) {
#pragma unroll 1
    for (int s = Slices - 1; s >= 1; --s) {
      if (slice == s) {
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) {
            float& sum = partial[(row0 + row(i)) * LD + col0 + col(j)];
            sum = (s == Slices - 1 ? 0.0f : sum) + acc[i][j];
          }
      }
      __syncthreads();
    }
    if (slice == 0) {
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += partial[(row0 + row(i)) * LD + col0 + col(j)];
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

// One BK×BX MN-major tile (tile[kk·LDS + x]) of an operand, loaded in two halves so that the
// global-memory latency can hide behind other work: fetch() issues this thread's float4 loads into
// registers (Operand::load4, zeros outside the operand), store() writes them into the tile,
// transposed on the way where the operand is K-major. load_tile_vec4 (common.cuh) is the two in a
// row. NT threads, tid = the thread's index.
template <int BK, int BX, int LDS, int NT, bool KMajor>
struct PrefetchedTile {
  static constexpr int kCount = BK * BX / 4, kPerThread = (kCount + NT - 1) / NT;
  static_assert(BK % 4 == 0 && BX % 4 == 0 && LDS % 4 == 0, "float4 loads and stores");
  float4 v[kPerThread];

  __device__ __forceinline__ void fetch(const Operand<KMajor>& op, int x0, int k0, int tid) {
    for_each_chunk(tid, [&](int j, int x, int kk) { v[j] = op.load4(x0 + x, k0 + kk); });
  }
  __device__ __forceinline__ void store(float* tile, int tid) const {
    for_each_chunk(tid, [&](int j, int x, int kk) {
      if constexpr (KMajor) {  // four k of one row of the operand: a column of the tile
        tile[(kk + 0) * LDS + x] = v[j].x;
        tile[(kk + 1) * LDS + x] = v[j].y;
        tile[(kk + 2) * LDS + x] = v[j].z;
        tile[(kk + 3) * LDS + x] = v[j].w;
      } else {
        *reinterpret_cast<float4*>(&tile[kk * LDS + x]) = v[j];
      }
    });
  }

 private:
  // f(j, x, kk) for this thread's chunks j: four values along the operand's contiguous dim from
  // (x, kk), as load_tile_vec4 numbers them.
  template <class F>
  __device__ __forceinline__ static void for_each_chunk(int tid, F&& f) {
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int i = j * NT + tid;
      if (kCount % NT == 0 || i < kCount)
        f(j, KMajor ? i / (BK / 4) : (i % (BX / 4)) * 4,
          KMajor ? (i % (BK / 4)) * 4 : i / (BX / 4));
    }
  }
};

// Step 5's double-buffered K loop (written out in 05_dbuf.cu), as step 6 runs it: two shared
// buffers per operand, a_tiles[2] and
// b_tiles[2], each an MN-major BK×BM (BK×BN) tile of row stride LDS. While `tile` multiplies one
// buffer, the next K tile's loads are in flight in registers; they are stored into the other
// buffer after the multiply, and one barrier per K tile publishes them. NT threads load; with
// Slices > 1 they form that many groups, and group `slice` multiplies only its BK / Slices k of
// each tile (step 6's sliced K).
template <int BK, int BM, int BN, int LDS, int NT, int Slices = 1, class Tile, bool KMajorA,
          bool KMajorB>
__device__ __forceinline__ void multiply_double_buffered(
    Tile& tile, float (*a_tiles)[BK * LDS], float (*b_tiles)[BK * LDS], const Operand<KMajorA>& a,
    const Operand<KMajorB>& b, int m0, int n0, int row0, int col0, int tid, int slice = 0) {
  static_assert(BK % Slices == 0, "each slice multiplies the same number of k");
  constexpr int kSliceK = BK / Slices;
  PrefetchedTile<BK, BM, LDS, NT, KMajorA> next_a;
  PrefetchedTile<BK, BN, LDS, NT, KMajorB> next_b;
  const int k_tiles = (a.extent_k + BK - 1) / BK;
  next_a.fetch(a, m0, 0, tid);
  next_b.fetch(b, n0, 0, tid);
  next_a.store(a_tiles[0], tid);
  next_b.store(b_tiles[0], tid);
  __syncthreads();
  for (int kt = 0; kt < k_tiles; ++kt) {
    const bool more = kt + 1 < k_tiles;
    if (more) {  // issued now, waited for only at the stores below
      next_a.fetch(a, m0, (kt + 1) * BK, tid);
      next_b.fetch(b, n0, (kt + 1) * BK, tid);
    }
    tile.template multiply<kSliceK, LDS>(a_tiles[kt % 2] + slice * kSliceK * LDS,
                                         b_tiles[kt % 2] + slice * kSliceK * LDS, row0, col0);
    if (more) {  // the other buffer: every thread finished reading it before the last barrier
      next_a.store(a_tiles[(kt + 1) % 2], tid);
      next_b.store(b_tiles[(kt + 1) % 2], tid);
    }
    __syncthreads();
  }
}

}  // namespace gemm::detail
