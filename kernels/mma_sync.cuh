// Primitives of the mma.sync TF32 kernels: step 7 (07_tf32.cu), step 10 (10_tf32x3.cu) and
// tf32x3_fast's tiles (fast/mma_sync_tiles.cuh). Each of those kernels is written out in its own
// file and composes these:
//   MmaShape<Cfg>          a named tile config's derived counts (warps, threads, MMA tiles)
//   OperandTile, MmaStage  the padded shared tiles of one pipeline stage
//   mma_tf32               the mma.sync.m16n8k8 TF32 instruction
//   load_a_fragment, load_b_fragment, store_accumulator   a lane's share of one MMA tile
//   mma_ops::Tf32x1        one TF32 product per fragment pair (step 7); step 10 writes its three
//                          products in its own file (production's copy: fast/split_tf32.cuh)
//   launch_mma_sync_kernel the launch of one instantiated kernel, with split-K
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#pragma once

#include <cstdint>

#include "kernels/pipeline.cuh"
#include "kernels/split_k.cuh"

namespace gemm::detail {

constexpr int kMmaM = 16, kMmaN = 8, kMmaK = 8;  // mma.sync.m16n8k8 shape

// A tile config names its block tile (kBlockM × kBlockN, K tiles of kBlockK), its warp tile
// (kWarpM × kWarpN) and its pipeline depth (kStages), e.g.
//   struct LargeTile {
//     static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32, kWarpM = 64, kWarpN = 32,
//                          kStages = 3;
//   };
// MmaShape<Cfg> is Cfg with what follows from it, checked.
template <class Cfg>
struct MmaShape : Cfg {
  static constexpr int kWarpsM = Cfg::kBlockM / Cfg::kWarpM, kWarpsN = Cfg::kBlockN / Cfg::kWarpN;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kFragsM = Cfg::kWarpM / kMmaM, kFragsN = Cfg::kWarpN / kMmaN;  // MMA tiles
  static_assert(Cfg::kBlockM % Cfg::kWarpM == 0 && Cfg::kBlockN % Cfg::kWarpN == 0,
                "warp tiles must tile the block tile");
  static_assert(Cfg::kWarpM % kMmaM == 0 && Cfg::kWarpN % kMmaN == 0,
                "MMA tiles (16×8) must tile the warp tile");
  static_assert(Cfg::kBlockK % kMmaK == 0, "the K tile must be a whole number of MMA steps (8)");
  static_assert(Cfg::kStages >= 2, "the cp.async pipeline needs at least two stages");
};

// Shared tile of one operand, laid out as the operand is in global memory, so that every cp.async
// is 16 bytes wide. Fragment reads touch (x = base + lane/4, k = base + lane%4): with a row stride
// ≡ 4 (mod 32) words for K-major tiles and ≡ 8 (mod 32) for MN-major ones, the 32 lanes hit 32
// different banks. (An MN-major row of 16, in tf32x3_fast's skinny tiles, is padded to 40.)
template <int BK, int BX, bool KMajor>
struct OperandTile {
  static constexpr int kLds = KMajor ? BK + 4 : (BX + 31) / 32 * 32 + 8;
  static constexpr int kFloats = (KMajor ? BX : BK) * kLds;
  static_assert(kLds % 32 == (KMajor ? 4 : 8), "padding chosen for conflict-free fragment reads");
  __device__ static float get(const float* tile, int x, int k) {
    return KMajor ? tile[x * kLds + k] : tile[k * kLds + x];
  }
};

// One pipeline stage of a Cfg kernel in one layout: A's tile, then B's.
template <class Cfg, bool KMajorA, bool KMajorB>
struct MmaStage {
  using TileA = OperandTile<Cfg::kBlockK, Cfg::kBlockM, KMajorA>;
  using TileB = OperandTile<Cfg::kBlockK, Cfg::kBlockN, KMajorB>;
  static constexpr int kFloats = TileA::kFloats + TileB::kFloats;
  static constexpr int kSmemBytes = Cfg::kStages * int(sizeof(float)) * kFloats;  // all stages
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
};

// d (16×8 fp32) += a (16×8 TF32) · b (8×8 TF32), by the 32 lanes of a warp, each holding its
// share of each fragment (load_a_fragment, load_b_fragment, store_accumulator).
__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4],
                                         const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// A lane's share of the fragments. Lane (group = lane / 4, quad = lane % 4) holds, of a 16×8 A
// fragment, rows group and group + 8 at k = quad and quad + 4; of an 8×8 B fragment, column group
// at k = quad and quad + 4; of a 16×8 accumulator, rows group and group + 8 at columns 2·quad and
// 2·quad + 1. The loaders take the lane's first element, (row, k) = (fragment row + group,
// fragment k + quad), and convert the values as Arithmetic::from does (once per value loaded).
template <class Tile, class Arithmetic>
__device__ __forceinline__ typename Arithmetic::template Fragment<4> load_a_fragment(
    const float* tile, int row, int k) {
  const float v[4] = {Tile::get(tile, row, k), Tile::get(tile, row + 8, k),
                      Tile::get(tile, row, k + 4), Tile::get(tile, row + 8, k + 4)};
  return Arithmetic::from(v);
}
template <class Tile, class Arithmetic>
__device__ __forceinline__ typename Arithmetic::template Fragment<2> load_b_fragment(
    const float* tile, int col, int k) {
  const float v[2] = {Tile::get(tile, col, k), Tile::get(tile, col, k + 4)};
  return Arithmetic::from(v);
}
// The lane's 4 accumulators to C, from its first element (row, col) = (tile row + group, tile
// column + 2·quad).
__device__ __forceinline__ void store_accumulator(const Epilogue& c, int row, int col,
                                                  const float (&acc)[4]) {
  c.store(row, col, acc[0]);
  c.store(row, col + 1, acc[1]);
  c.store(row + 8, col, acc[2]);
  c.store(row + 8, col + 1, acc[3]);
}

// The arithmetic of the mma.sync kernels: how fp32 values become the instruction's TF32 operands
// and how one fragment pair's product is accumulated. An arithmetic provides
//   Fragment<N>                          the operands made from N fp32 values
//   Fragment<N> from(float[N])           the conversion, once per value loaded
//   mma(acc, Fragment<4>, Fragment<2>)   acc (16×8 accumulator fragment) += A (16×8) · B (8×8)
// Tf32x1 here; step 10's Tf32x3 in 10_tf32x3.cu, production's in fast/split_tf32.cuh. (The wgmma
// family has its own pair of that name in its
// headers; these live in mma_ops.)
namespace mma_ops {

// One TF32 product per fragment pair: each fp32 value rounded to TF32 (10-bit mantissa) once.
struct Tf32x1 {
  template <int N>
  struct Fragment {
    uint32_t x[N];
  };
  template <int N>
  __device__ __forceinline__ static Fragment<N> from(const float (&v)[N]) {
    Fragment<N> f;
#pragma unroll
    for (int e = 0; e < N; ++e) f.x[e] = to_tf32(v[e]);
    return f;
  }
  __device__ __forceinline__ static void mma(float (&acc)[4], const Fragment<4>& a,
                                             const Fragment<2>& b) {
    mma_tf32(acc, a.x, b.x);
  }
};

}  // namespace mma_ops

// Launches kKernel, a kernel of config Cfg for layout (KMajorA, KMajorB) taking (A, B, C,
// k_per_split), on Cfg's grid of output tiles with K split as `plan` says (run_split_k: grid.z =
// plan.splits, partial products reduced in order).
template <class Cfg, bool KMajorA, bool KMajorB, auto kKernel>
void launch_mma_sync_kernel(const Problem& p, SplitK plan, cudaStream_t stream) {
  constexpr int smem_bytes = MmaStage<Cfg, KMajorA, KMajorB>::kSmemBytes;
  allow_dynamic_smem<kKernel>(smem_bytes);
  dim3 grid = tile_grid<Cfg::kBlockM, Cfg::kBlockN>(p);
  grid.z = plan.splits;
  run_split_k(p, plan, stream, [&](const Epilogue& c, int k_per_split) {
    kKernel<<<grid, MmaShape<Cfg>::kThreads, smem_bytes, stream>>>(
        operand_a<KMajorA>(p), operand_b<KMajorB>(p), c, k_per_split);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace gemm::detail
