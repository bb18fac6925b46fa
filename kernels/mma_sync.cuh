// The warp-level tensor-core GEMM of steps 7 (07_tf32.cu) and 10 (10_tf32x3.cu): block tile →
// warp tiles → mma.sync m16n8k8 TF32 fragments read straight from shared memory, with a 3-stage
// cp.async pipeline and split-K on small grids. The steps differ only in their Arithmetic: how
// fp32 values become TF32 operands and how many products each fragment pair takes.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#pragma once

#include <cstdint>

#include "kernels/pipeline.cuh"
#include "kernels/split_k.cuh"

namespace gemm::detail {

constexpr int kMmaM = 16, kMmaN = 8, kMmaK = 8;  // mma.sync.m16n8k8 shape

// StagedOutput_: the output tile goes through shared memory to be stored a float4 row at a time
// (tf32x3_fast's short-K tile, whose blocks do little but store); otherwise each thread stores its
// fragments straight to C.
template <int BM_, int BN_, int BK_, int WM_, int WN_, int Stages_, bool StagedOutput_ = false>
struct MmaConfig {
  static constexpr int kBm = BM_, kBn = BN_, kBk = BK_;  // block tile
  static constexpr int kWm = WM_, kWn = WN_;             // warp tile
  static constexpr int kStages = Stages_;
  static constexpr bool kStagedOutput = StagedOutput_;
  static constexpr int kWarpsM = kBm / kWm, kWarpsN = kBn / kWn;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kFragsM = kWm / kMmaM, kFragsN = kWn / kMmaN;  // MMA tiles per warp tile
  static_assert(kBm % kWm == 0 && kBn % kWn == 0, "warp tiles must tile the block tile");
  static_assert(kWm % kMmaM == 0 && kWn % kMmaN == 0, "MMA tiles must tile the warp tile");
  static_assert(kBk % kMmaK == 0, "the K tile must be a whole number of MMA steps");
};

// Shared tile of one operand, laid out as the operand is in global memory. Fragment reads touch
// (x = base + lane/4, k = base + lane%4): with a row stride ≡ 4 (mod 32) words for K-major tiles
// and ≡ 8 (mod 32) for MN-major ones, the 32 lanes hit 32 different banks. (An MN-major row of 16,
// in tf32x3_fast's skinny tiles, is padded to 40.)
template <int BK, int BX, bool KMajor>
struct OperandTile {
  static constexpr int kLds = KMajor ? BK + 4 : (BX + 31) / 32 * 32 + 8;
  static constexpr int kFloats = (KMajor ? BX : BK) * kLds;
  static_assert(kLds % 32 == (KMajor ? 4 : 8), "padding chosen for conflict-free fragment reads");
  __device__ static float get(const float* tile, int x, int k) {
    return KMajor ? tile[x * kLds + k] : tile[k * kLds + x];
  }
};

__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4],
                                         const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// The warp-tiled mma.sync kernel of steps 7 and 10. Arithmetic says how a fragment of fp32 values
// becomes the instruction's TF32 operands and how a product is accumulated: 07 rounds each value
// once and issues one mma.sync, 10 splits each value in two and issues three. Arithmetic provides
//   Fragment<N>                  the operands made from N fp32 values
//   Fragment<N> from(float[N])   the conversion, done once per value loaded
//   mma(acc, Fragment<4>, Fragment<2>)   acc (16×8 accumulator fragment) += A (16×8) · B (8×8)
template <class Cfg, class Arithmetic, bool KMajorA, bool KMajorB>
__global__ void __launch_bounds__(Cfg::kThreads)
    mma_sync_kernel(Operand<KMajorA> a, Operand<KMajorB> b, Epilogue c, int k_per_split) {
  enter_k_slice(a, b, c, k_per_split);
  using TileA = OperandTile<Cfg::kBk, Cfg::kBm, KMajorA>;
  using TileB = OperandTile<Cfg::kBk, Cfg::kBn, KMajorB>;
  constexpr int kStageFloats = TileA::kFloats + TileB::kFloats;
  extern __shared__ __align__(16) float smem[];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int group = lane / 4, quad = lane % 4;  // the MMA fragment coordinates of this lane
  const int m0 = blockIdx.y * Cfg::kBm, n0 = blockIdx.x * Cfg::kBn;
  const int warp_row = (warp / Cfg::kWarpsN) * Cfg::kWm,
            warp_col = (warp % Cfg::kWarpsN) * Cfg::kWn;

  float acc[Cfg::kFragsM][Cfg::kFragsN][4] = {};
  auto a_tile = [&](int stage) { return smem + stage * kStageFloats; };
  auto b_tile = [&](int stage) { return smem + stage * kStageFloats + TileA::kFloats; };
  pipelined_k_loop<Cfg::kStages>(
      (a.extent_k + Cfg::kBk - 1) / Cfg::kBk,
      [&](int stage, int kt) {
        cp_async_tile_native<Cfg::kBk, Cfg::kBm, TileA::kLds, Cfg::kThreads>(a_tile(stage), a, m0,
                                                                             kt * Cfg::kBk, tid);
        cp_async_tile_native<Cfg::kBk, Cfg::kBn, TileB::kLds, Cfg::kThreads>(b_tile(stage), b, n0,
                                                                             kt * Cfg::kBk, tid);
      },
      [&](int stage) {
        const float* as = a_tile(stage);
        const float* bs = b_tile(stage);
#pragma unroll
        for (int k8 = 0; k8 < Cfg::kBk; k8 += kMmaK) {
          // A fragment (16×8, row-major): rows group, group+8; columns quad, quad+4.
          typename Arithmetic::template Fragment<4> af[Cfg::kFragsM];
#pragma unroll
          for (int i = 0; i < Cfg::kFragsM; ++i) {
            const int r = warp_row + i * kMmaM + group;
            const float v[4] = {TileA::get(as, r, k8 + quad), TileA::get(as, r + 8, k8 + quad),
                                TileA::get(as, r, k8 + quad + 4),
                                TileA::get(as, r + 8, k8 + quad + 4)};
            af[i] = Arithmetic::from(v);
          }
          // B fragment (8×8, column-major): column group; rows quad, quad+4.
          typename Arithmetic::template Fragment<2> bf[Cfg::kFragsN];
#pragma unroll
          for (int j = 0; j < Cfg::kFragsN; ++j) {
            const int col = warp_col + j * kMmaN + group;
            const float v[2] = {TileB::get(bs, col, k8 + quad), TileB::get(bs, col, k8 + quad + 4)};
            bf[j] = Arithmetic::from(v);
          }
#pragma unroll
          for (int i = 0; i < Cfg::kFragsM; ++i)
#pragma unroll
            for (int j = 0; j < Cfg::kFragsN; ++j) Arithmetic::mma(acc[i][j], af[i], bf[j]);
        }
      });

  // Accumulator fragment: (group, 2·quad + {0,1}) and (group + 8, 2·quad + {0,1}).
  if constexpr (Cfg::kStagedOutput) {
    constexpr int kOutputLd = Cfg::kBn + 8;
    static_assert(kOutputLd % 32 == 8,
                  "a row stride ≡ 8 (mod 32) makes the float2 writes conflict-free");
    static_assert(Cfg::kBm * kOutputLd <= Cfg::kStages * kStageFloats,
                  "the staged output tile must fit in the pipeline's shared memory");
    cp_async_wait<0>();
    __syncthreads();  // every warp is done reading the stages
#pragma unroll
    for (int i = 0; i < Cfg::kFragsM; ++i)
#pragma unroll
      for (int j = 0; j < Cfg::kFragsN; ++j) {
        float* out = smem + (warp_row + i * kMmaM + group) * kOutputLd + warp_col + j * kMmaN;
        *reinterpret_cast<float2*>(out + 2 * quad) = make_float2(acc[i][j][0], acc[i][j][1]);
        *reinterpret_cast<float2*>(out + 8 * kOutputLd + 2 * quad) =
            make_float2(acc[i][j][2], acc[i][j][3]);
      }
    __syncthreads();
    store_staged_tile<Cfg::kBm, Cfg::kBn, kOutputLd, Cfg::kThreads>(c, smem, m0, n0, tid);
  } else {
#pragma unroll
    for (int i = 0; i < Cfg::kFragsM; ++i)
#pragma unroll
      for (int j = 0; j < Cfg::kFragsN; ++j) {
        const int row = m0 + warp_row + i * kMmaM + group;
        const int col = n0 + warp_col + j * kMmaN + 2 * quad;
        c.store(row, col, acc[i][j][0]);
        c.store(row, col + 1, acc[i][j][1]);
        c.store(row + 8, col, acc[i][j][2]);
        c.store(row + 8, col + 1, acc[i][j][3]);
      }
  }
}

template <class Cfg, class Arithmetic>
void launch_mma_sync_config(const Problem& p, SplitK plan, cudaStream_t stream) {
  with_layout(p, [&](auto a_k_major, auto b_k_major) {
    constexpr bool KMajorA = decltype(a_k_major)::value, KMajorB = decltype(b_k_major)::value;
    constexpr int smem_bytes = Cfg::kStages * int(sizeof(float)) *
                               (OperandTile<Cfg::kBk, Cfg::kBm, KMajorA>::kFloats +
                                OperandTile<Cfg::kBk, Cfg::kBn, KMajorB>::kFloats);
    static_assert(smem_bytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
    constexpr auto kernel = mma_sync_kernel<Cfg, Arithmetic, KMajorA, KMajorB>;
    allow_dynamic_smem<kernel>(smem_bytes);
    dim3 grid = tile_grid<Cfg::kBm, Cfg::kBn>(p);
    grid.z = plan.splits;
    run_split_k(p, plan, stream, [&](const Epilogue& c, int k_per_split) {
      kernel<<<grid, Cfg::kThreads, smem_bytes, stream>>>(operand_a<KMajorA>(p),
                                                          operand_b<KMajorB>(p), c, k_per_split);
      CUDA_CHECK_LAUNCH();
    });
  });
}

// The tile choice for any pair of configs: the large tile when it gives every multiprocessor a
// block; otherwise the small one, with K split across blocks until the grid fills the chip
// (split_k.cuh). scripts/tune/ times other configs through it.
template <class Large, class Small, class Arithmetic>
void launch_mma_sync_tiles(const Problem& p, cudaStream_t stream) {
  launch_large_or_split_k<Large, Small>(p, [&](auto tile, SplitK plan) {
    launch_mma_sync_config<typename decltype(tile)::type, Arithmetic>(p, plan, stream);
  });
}

}  // namespace gemm::detail
