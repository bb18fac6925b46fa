// The register-blocked inner product and epilogue shared by the SIMT variants 04–06.
//
// A thread owns a TM×TN tile of C in registers. Which rows it owns depends on how A's shared tile
// is laid out (TileLayout, common.cuh), and likewise its columns on B's:
//   K-major tile[k][x]: float4 groups of 4 consecutive rows, row0 + g·kRowStep + {0,1,2,3} for
//     g < TM/4; one float4 read gives a thread 4 of its rows at one k. Neighbouring threads' row0
//     are 4 apart, so their reads are neighbouring float4s.
//   X-major tile[x][k]: single rows kRowStep/4 apart, row0 + i·(kRowStep/4) for i < TM; one float4
//     read gives a thread 4 k of one row. Neighbouring threads' row0 are 1 apart, so with a row
//     stride of an odd number of float4s their reads fall in different 16-byte bank groups.
// Spreading a thread's rows out (rather than TM consecutive rows) is what makes the fragment reads
// of neighbouring threads conflict-free in both layouts.
#pragma once

#include "kernels/common.cuh"

namespace gemm::detail {

template <int TM, int TN, int kRowStep, int kColStep, TileLayout LA = TileLayout::KMajor,
          TileLayout LB = TileLayout::KMajor>
struct ThreadTile {
  static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are made of float4 groups");
  static_assert(kRowStep % 4 == 0 && kColStep % 4 == 0, "row and column steps span whole groups");
  float acc[TM][TN] = {};

  // How far apart neighbouring threads' row0 (col0) must be.
  static constexpr int kLaneRowStep = LA == TileLayout::KMajor ? 4 : 1;
  static constexpr int kLaneColStep = LB == TileLayout::KMajor ? 4 : 1;

  // Offset of the thread's i-th row from row0, and of its j-th column from col0.
  __host__ __device__ static constexpr int row(int i) {
    return LA == TileLayout::KMajor ? (i / 4) * kRowStep + i % 4 : i * (kRowStep / 4);
  }
  __host__ __device__ static constexpr int col(int j) {
    return LB == TileLayout::KMajor ? (j / 4) * kColStep + j % 4 : j * (kColStep / 4);
  }

  // acc += Σ_kk A(rows, kk) ⊗ B(kk, cols) over one K tile of BK: a_tile and b_tile laid out as LA
  // and LB say, with row strides LDA and LDB.
  template <int BK, int LDA, int LDB>
  __device__ __forceinline__ void multiply(const float* a_tile, const float* b_tile, int row0,
                                           int col0) {
    static_assert(LDA % 4 == 0 && LDB % 4 == 0, "float4 fragment reads need 16-byte rows");
    if constexpr (LA == TileLayout::KMajor && LB == TileLayout::KMajor) {
      multiply_kmajor<BK, LDA, LDB>(a_tile, b_tile, row0, col0);
    } else {
      static_assert(BK % 4 == 0, "an X-major tile is read 4 k at a time");
      // With both tiles X-major all of A's fragment is live until B's last column. Unrolled, ptxas
      // overlaps the next step's copy of it: ~214 registers at 8×8 (one 256-thread block per SM,
      // sm_90); rolled, 128. Smaller thread tiles have room to spare and stay unrolled.
      constexpr bool kRoll = LA == TileLayout::XMajor && LB == TileLayout::XMajor && TM * TN >= 64;
      constexpr int kUnroll = kRoll ? 1 : BK / 4;
#pragma unroll kUnroll
      for (int k4 = 0; k4 < BK; k4 += 4) multiply4<LDA, LDB>(a_tile, b_tile, row0, col0, k4);
    }
  }

  // The operands of kStepK rank-1 updates held in registers, for a K loop that reads the next
  // step's fragment from shared memory while this one's FMAs run (pipelined_k_loop_fragments):
  // a[i][s] = A(row(i), k + s), b[j][s] = B(k + s, col(j)). Both tiles are in one layout. K-major
  // ones are read one k per step; X-major ones a float2 of 2 k per row, not a float4 of 4: two
  // 8×4 fragments of 4 k would leave no registers for a fourth block per multiprocessor.
  static constexpr int kStepK = LA == TileLayout::KMajor ? 1 : 2;
  struct Fragment {
    float a[TM][kStepK];
    float b[TN][kStepK];
  };

  template <int LDA, int LDB>
  __device__ __forceinline__ static void load_fragment(Fragment& f, const float* a_tile,
                                                       const float* b_tile, int row0, int col0,
                                                       int k) {
    static_assert(LDA % 4 == 0 && LDB % 4 == 0, "fragment reads need 16-byte rows");
    static_assert(LA == LB, "fragments are pipelined for two tiles in one layout (06_warptile.cu)");
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

  // Writes the tile into a shared BM×BN tile (row stride LD) at the thread's rows and columns,
  // for a reduction across blocks (split_k.cuh).
  template <int LD>
  __device__ __forceinline__ void stage(float* tile, int row0, int col0) const {
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) tile[(row0 + row(i)) * LD + col0 + col(j)] = acc[i][j];
  }

  // Writes the tile to C at the block's origin (m0, n0): a float4 per column group where the
  // columns are grouped and it fits, else one element at a time.
  __device__ __forceinline__ void store(const Epilogue& c, int m0, int n0, int row0,
                                        int col0) const {
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int r = m0 + row0 + row(i);
      if constexpr (LB == TileLayout::KMajor) {
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
    if constexpr (L == TileLayout::KMajor) {
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

  // Both tiles K-major: per k, TM/4 + TN/4 float4 reads (a one-k fragment) and one rank-1 update.
  template <int BK, int LDA, int LDB>
  __device__ __forceinline__ void multiply_kmajor(const float* a_tile, const float* b_tile,
                                                  int row0, int col0) {
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      Fragment f;
      load_fragment<LDA, LDB>(f, a_tile, b_tile, row0, col0, kk);
      fma(f);
    }
  }

  // k4 … k4+3: 4 rank-1 updates, at least one tile X-major. The fragment of an X-major operand
  // (A's if both are) is read whole, TM or TN float4s along k: held[x][s] = element(x, k4 + s).
  // The other operand is then read one float4 at a time, each used at once for 4·TM (4·TN) FMAs:
  // fewer registers live than holding both fragments. Each acc[i][j] still adds its k in order,
  // as multiply_kmajor does.
  template <int LDA, int LDB>
  __device__ __forceinline__ void multiply4(const float* a_tile, const float* b_tile, int row0,
                                            int col0, int k4) {
    if constexpr (LA == TileLayout::XMajor) {
      float a[TM][4];
#pragma unroll
      for (int i = 0; i < TM; ++i)
        *reinterpret_cast<float4*>(a[i]) =
            *reinterpret_cast<const float4*>(&a_tile[(row0 + row(i)) * LDA + k4]);
      if constexpr (LB == TileLayout::XMajor) {
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
#pragma unroll
        for (int s = 0; s < 4; ++s)
#pragma unroll
          for (int h = 0; h < TN / 4; ++h) {  // columns col(4h) … col(4h+3) at k4 + s
            const float4 b =
                *reinterpret_cast<const float4*>(&b_tile[(k4 + s) * LDB + col0 + h * kColStep]);
#pragma unroll
            for (int i = 0; i < TM; ++i) {
              acc[i][4 * h] += a[i][s] * b.x;
              acc[i][4 * h + 1] += a[i][s] * b.y;
              acc[i][4 * h + 2] += a[i][s] * b.z;
              acc[i][4 * h + 3] += a[i][s] * b.w;
            }
          }
      }
    } else {  // B X-major, A K-major: the mirror image of the case above
      float b[TN][4];
#pragma unroll
      for (int j = 0; j < TN; ++j)
        *reinterpret_cast<float4*>(b[j]) =
            *reinterpret_cast<const float4*>(&b_tile[(col0 + col(j)) * LDB + k4]);
#pragma unroll
      for (int s = 0; s < 4; ++s)
#pragma unroll
        for (int g = 0; g < TM / 4; ++g) {  // rows row(4g) … row(4g+3) at k4 + s
          const float4 a =
              *reinterpret_cast<const float4*>(&a_tile[(k4 + s) * LDA + row0 + g * kRowStep]);
#pragma unroll
          for (int j = 0; j < TN; ++j) {
            acc[4 * g][j] += a.x * b[j][s];
            acc[4 * g + 1][j] += a.y * b[j][s];
            acc[4 * g + 2][j] += a.z * b[j][s];
            acc[4 * g + 3][j] += a.w * b[j][s];
          }
        }
    }
  }
};

}  // namespace gemm::detail
