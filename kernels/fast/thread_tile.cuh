// The thread tile of the production kernel (warptile.cuh): a TM×TN register-blocked product,
// as in step 4, generalised to tiles of either layout and to fragments read ahead.
//
// A thread owns a TM×TN tile of C in registers. Which rows it owns depends on how A's shared tile
// is laid out (TileLayout, common.cuh), and likewise its columns on B's:
//   MN-major tile[k][x]: float4 groups of 4 consecutive rows, row0 + g·kRowStep + {0,1,2,3} for
//     g < TM/4; one float4 read gives a thread 4 of its rows at one k. Neighbouring threads' row0
//     are 4 apart, so their reads are neighbouring float4s.
//   K-major tile[x][k]: single rows kRowStep/4 apart, row0 + i·(kRowStep/4) for i < TM; one float4
//     read gives a thread 4 k of one row. Neighbouring threads' row0 are 1 apart, so with a row
//     stride of an odd number of float4s their reads fall in different 16-byte bank groups.
// Spreading a thread's rows out (rather than TM consecutive rows) is what makes the fragment reads
// of neighbouring threads conflict-free in both layouts.
#pragma once

#include "kernels/common.cuh"

namespace gemm::detail {

template <int TM, int TN, int kRowStep, int kColStep, TileLayout LA = TileLayout::MNMajor,
          TileLayout LB = TileLayout::MNMajor>
struct ThreadTile {
  static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are made of float4 groups");
  static_assert(kRowStep % 4 == 0 && kColStep % 4 == 0, "row and column steps span whole groups");
  float acc[TM][TN] = {};

  // How far apart neighbouring threads' row0 (col0) must be.
  static constexpr int kLaneRowStep = LA == TileLayout::MNMajor ? 4 : 1;
  static constexpr int kLaneColStep = LB == TileLayout::MNMajor ? 4 : 1;

  // Offset of the thread's i-th row from row0, and of its j-th column from col0.
  __host__ __device__ static constexpr int row(int i) {
    return LA == TileLayout::MNMajor ? (i / 4) * kRowStep + i % 4 : i * (kRowStep / 4);
  }
  __host__ __device__ static constexpr int col(int j) {
    return LB == TileLayout::MNMajor ? (j / 4) * kColStep + j % 4 : j * (kColStep / 4);
  }

  // acc += Σ_kk A(rows, kk) ⊗ B(kk, cols) over one K tile of BK: a_tile and b_tile laid out as LA
  // and LB say, with row strides LDA and LDB.
  template <int BK, int LDA, int LDB>
  __device__ __forceinline__ void multiply(const float* a_tile, const float* b_tile, int row0,
                                           int col0) {
    static_assert(LDA % 4 == 0 && LDB % 4 == 0, "float4 fragment reads need 16-byte rows");
    if constexpr (LA == TileLayout::MNMajor && LB == TileLayout::MNMajor) {
      multiply_mn_major<BK, LDA, LDB>(a_tile, b_tile, row0, col0);
    } else {
      static_assert(BK % 4 == 0, "an K-major tile is read 4 k at a time");
      // With both tiles K-major all of A's fragment is live until B's last column. Unrolled, ptxas
      // overlaps the next step's copy of it: ~214 registers at 8×8 (one 256-thread block per SM,
      // sm_90); rolled, 128. Smaller thread tiles have room to spare and stay unrolled.
      constexpr bool kRoll = LA == TileLayout::KMajor && LB == TileLayout::KMajor && TM * TN >= 64;
      constexpr int kUnroll = kRoll ? 1 : BK / 4;
#pragma unroll kUnroll
      for (int k4 = 0; k4 < BK; k4 += 4) multiply4<LDA, LDB>(a_tile, b_tile, row0, col0, k4);
    }
  }

  // The operands of kStepK rank-1 updates held in registers, for a K loop that reads the next
  // step's fragment from shared memory while this one's FMAs run (pipelined_k_loop_fragments):
  // a[i][s] = A(row(i), k + s), b[j][s] = B(k + s, col(j)). Both tiles are in one layout. MN-major
  // ones are read one k per step; K-major ones a float2 of 2 k per row, not a float4 of 4: two
  // 8×4 fragments of 4 k would leave no registers for a fourth block per multiprocessor.
  static constexpr int kStepK = LA == TileLayout::MNMajor ? 1 : 2;
  struct Fragment {
    float a[TM][kStepK];
    float b[TN][kStepK];
  };

  template <int LDA, int LDB>
  __device__ __forceinline__ static void load_fragment(Fragment& f, const float* a_tile,
                                                       const float* b_tile, int row0, int col0,
                                                       int k) {
    static_assert(LDA % 4 == 0 && LDB % 4 == 0, "fragment reads need 16-byte rows");
    static_assert(LA == LB, "fragments are pipelined for two tiles in one layout (warptile.cuh)");
    load_operand<TM, LA, kRowStep, LDA>(f.a, a_tile, row0, k);
    load_operand<TN, LB, kColStep, LDB>(f.b, b_tile, col0, k);
  }

  // acc += the fragment's kStepK rank-1 updates, each acc[i][j] adding its k in order.
  __device__ __forceinline__ void fma(const Fragment& f) {
#pragma unroll
    for (int s = 0; s < kStepK; ++s)
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += f.a[i][s] * f.b[j][s];
  }

  // Writes the tile to C at the block's origin (m0, n0): a float4 per column group where the
  // columns are grouped and it fits, else one element at a time.
  __device__ __forceinline__ void store(const Epilogue& c, int m0, int n0, int row0,
                                        int col0) const {
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int r = m0 + row0 + row(i);
      if constexpr (LB == TileLayout::MNMajor) {
#pragma unroll
        for (int h = 0; h < TN / 4; ++h)
          c.store4(
              r, n0 + col0 + h * kColStep,
              make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2], acc[i][4 * h + 3]));
      } else {
#pragma unroll
        for (int j = 0; j < TN; ++j) c.store(r, n0 + col0 + col(j), acc[i][j]);
      }
    }
  }

 private:
  // One operand's half of a fragment: X = TM (TN) rows (columns) at offsets
  // (x0 + offset(x), k … k + kStepK − 1) of its tile, as its layout L (the tiles' one layout)
  // puts them.
  template <int X, TileLayout L, int kStep, int LD>
  __device__ __forceinline__ static void load_operand(float (&dst)[X][kStepK], const float* tile,
                                                      int x0, int k) {
    if constexpr (L == TileLayout::MNMajor) {
#pragma unroll
      for (int g = 0; g < X / 4; ++g) {
        const float4 v = *reinterpret_cast<const float4*>(&tile[k * LD + x0 + g * kStep]);
        dst[4 * g][0] = v.x;
        dst[4 * g + 1][0] = v.y;
        dst[4 * g + 2][0] = v.z;
        dst[4 * g + 3][0] = v.w;
      }
    } else {
#pragma unroll
      for (int x = 0; x < X; ++x) {
        const float2 v = *reinterpret_cast<const float2*>(&tile[(x0 + x * (kStep / 4)) * LD + k]);
        dst[x][0] = v.x;
        dst[x][1] = v.y;
      }
    }
  }

  // Both tiles MN-major: per k, TM/4 + TN/4 float4 reads (a one-k fragment) and one rank-1 update.
  template <int BK, int LDA, int LDB>
  __device__ __forceinline__ void multiply_mn_major(const float* a_tile, const float* b_tile,
                                                    int row0, int col0) {
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      Fragment f;
      load_fragment<LDA, LDB>(f, a_tile, b_tile, row0, col0, kk);
      fma(f);
    }
  }

  // k4 … k4+3: 4 rank-1 updates, at least one tile K-major. The fragment of an K-major operand
  // (A's if both are) is read whole, TM or TN float4s along k: held[x][s] = element(x, k4 + s).
  // The other operand is then read one float4 at a time, each used at once for 4·TM (4·TN) FMAs:
  // fewer registers live than holding both fragments. Each acc[i][j] still adds its k in order,
  // as multiply_mn_major does.
  template <int LDA, int LDB>
  __device__ __forceinline__ void multiply4(const float* a_tile, const float* b_tile, int row0,
                                            int col0, int k4) {
    if constexpr (LA == TileLayout::KMajor) {
      float a[TM][4];
#pragma unroll
      for (int i = 0; i < TM; ++i)
        *reinterpret_cast<float4*>(a[i]) =
            *reinterpret_cast<const float4*>(&a_tile[(row0 + row(i)) * LDA + k4]);
      if constexpr (LB == TileLayout::KMajor) {
#pragma unroll
        for (int j = 0; j < TN; ++j) {  // column j at k4 … k4+3
          const float4 b = *reinterpret_cast<const float4*>(&b_tile[(col0 + col(j)) * LDB + k4]);
#pragma unroll
          for (int i = 0; i < TM; ++i) {
            acc[i][j] += a[i][0] * b.x;
            acc[i][j] += a[i][1] * b.y;
            acc[i][j] += a[i][2] * b.z;
            acc[i][j] += a[i][3] * b.w;
          }
        }
      } else {
        multiply_held<TM, TN, kColStep, LDB>(a, b_tile, col0, k4,
                                             [&](int i, int j, float p) { acc[i][j] += p; });
      }
    } else {  // B K-major, A MN-major: the mirror image, B's fragment held
      float b[TN][4];
#pragma unroll
      for (int j = 0; j < TN; ++j)
        *reinterpret_cast<float4*>(b[j]) =
            *reinterpret_cast<const float4*>(&b_tile[(col0 + col(j)) * LDB + k4]);
      multiply_held<TN, TM, kRowStep, LDA>(b, a_tile, row0, k4,
                                           [&](int j, int i, float p) { acc[i][j] += p; });
    }
  }

  // One operand's fragment held, held[x][s] = its x-th value of the thread at k4 + s;
  // the other operand, MN-major, read a float4 group of 4 of its Y values at a time (kGroupStep
  // apart from y0, row stride LD), each group used at once for 4·X FMAs: add(x, y, product)
  // adds to the accumulator of held value x and streamed value y, each in its k order.
  template <int X, int Y, int kGroupStep, int LD, class Add>
  __device__ __forceinline__ static void multiply_held(const float (&held)[X][4],
                                                       const float* streamed_tile, int y0, int k4,
                                                       Add&& add) {
#pragma unroll
    for (int s = 0; s < 4; ++s)
#pragma unroll
      for (int g = 0; g < Y / 4; ++g) {
        const float4 v =
            *reinterpret_cast<const float4*>(&streamed_tile[(k4 + s) * LD + y0 + g * kGroupStep]);
#pragma unroll
        for (int x = 0; x < X; ++x) {
          add(x, 4 * g, held[x][s] * v.x);
          add(x, 4 * g + 1, held[x][s] * v.y);
          add(x, 4 * g + 2, held[x][s] * v.z);
          add(x, 4 * g + 3, held[x][s] * v.w);
        }
      }
  }
};

}  // namespace gemm::detail
