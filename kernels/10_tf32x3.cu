// Step 10 — fp32 accuracy from TF32 tensor cores ("3×TF32", as CUTLASS names it). Each fp32 value
// x is split into a TF32 high part and a TF32 remainder, x = hi + lo with hi = tf32(x) and
// lo = tf32(x − hi), so a·b = hi_a·hi_b + hi_a·lo_b + lo_a·hi_b + lo_a·lo_b. Three mma.sync per
// fragment pair take the first three terms, smallest first; the dropped lo_a·lo_b and the
// rounding of lo are about 2⁻²² relative to a·b, below fp32's own rounding of the sum, so the
// result passes the fp32 tolerance where step 7's one product (≈2⁻¹¹) does not.
// Change from 07: the arithmetic only. Step 7's Tf32x1 (mma_sync.cuh: round each value once,
// one mma.sync) becomes Tf32x3, written out below: split each value once as it is loaded from
// shared memory, in registers, and issue three mma.sync per fragment pair. The tiles, the
// pipeline and split-K are 07's; each K step costs three instructions instead of one. Inputs
// must be finite: an infinite x gives lo = ∞ − ∞ = NaN.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
//
// Run it (a build in build/, scripts/train.sh makes one):
//   build/apps/gemm_bench/gemm_bench --variants tf32,tf32x3 --shapes 4096
//   scripts/train.sh --gemm tf32x3 --epochs 2
#include "kernels/launchers.h"
#include "kernels/mma_sync.cuh"

namespace gemm::detail {
namespace {

// The idea of this step: three TF32 products per fragment pair, with step 7's interface
// (mma_sync.cuh: Fragment, from, mma), so the kernel below is step 7's with Tf32x1 → Tf32x3.
// (Production's copy, for tf32x3_fast, is kernels/fast/split_tf32.cuh.)
struct Tf32x3 {
  // Each fp32 value as two TF32 operands: x = hi + lo.
  template <int N>
  struct Fragment {
    uint32_t hi[N], lo[N];
  };
  // The split, once per value loaded: hi = tf32(x); x − hi is exact in fp32, then rounded to lo.
  template <int N>
  __device__ __forceinline__ static Fragment<N> from(const float (&v)[N]) {
    Fragment<N> f;
#pragma unroll
    for (int e = 0; e < N; ++e) {
      f.hi[e] = to_tf32(v[e]);
      f.lo[e] = to_tf32(v[e] - __uint_as_float(f.hi[e]));
    }
    return f;
  }
  // acc += a · b as lo_a·hi_b + hi_a·lo_b + hi_a·hi_b (lo_a·lo_b, about 2⁻²² of a·b, dropped): the
  // small products first, so that they are not rounded away against the large one.
  __device__ __forceinline__ static void mma(float (&acc)[4], const Fragment<4>& a,
                                             const Fragment<2>& b) {
    mma_tf32(acc, a.lo, b.hi);
    mma_tf32(acc, a.hi, b.lo);
    mma_tf32(acc, a.hi, b.hi);
  }
};

// For grids that give every multiprocessor a block.
struct LargeTile {
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32, kWarpM = 64, kWarpN = 32,
                       kStages = 3;
};
static_assert(MmaShape<LargeTile>::kThreads == 256, "8 warps of 64×32 cover the 128×128 tile");
// For the smaller grids, K split.
struct SmallTile {
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 32, kWarpM = 32, kWarpN = 32,
                       kStages = 3;
};
static_assert(MmaShape<SmallTile>::kThreads == 128, "4 warps of 32×32 cover the 64×64 tile");

// Block (blockIdx.y, blockIdx.x) computes the kBlockM × kBlockN tile of C from K slice blockIdx.z
// (k_per_split long); warp w its kWarpM × kWarpN warp tile of kFragsM × kFragsN MMA tiles (16×8).
template <class Cfg, bool KMajorA, bool KMajorB>
__global__ void __launch_bounds__(MmaShape<Cfg>::kThreads)
    tf32x3_kernel(Operand<KMajorA> a, Operand<KMajorB> b, Epilogue c, int k_per_split) {
  using Shape = MmaShape<Cfg>;
  using Stage = MmaStage<Cfg, KMajorA, KMajorB>;
  using TileA = typename Stage::TileA;
  using TileB = typename Stage::TileB;
  enter_k_slice(a, b, c, k_per_split);
  extern __shared__ __align__(16) float smem[];  // kStages × (A's tile, B's tile)
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int group = lane / 4, quad = lane % 4;  // the MMA fragment coordinates of this lane
  const int m0 = blockIdx.y * Cfg::kBlockM, n0 = blockIdx.x * Cfg::kBlockN;
  const int warp_row = (warp / Shape::kWarpsN) * Cfg::kWarpM,
            warp_col = (warp % Shape::kWarpsN) * Cfg::kWarpN;

  float acc[Shape::kFragsM][Shape::kFragsN][4] = {};
  auto a_tile = [&](int stage) { return smem + stage * Stage::kFloats; };
  auto b_tile = [&](int stage) { return smem + stage * Stage::kFloats + TileA::kFloats; };
  pipelined_k_loop<Cfg::kStages>(
      (a.extent_k + Cfg::kBlockK - 1) / Cfg::kBlockK,
      [&](int stage, int kt) {
        cp_async_tile_native<Cfg::kBlockK, Cfg::kBlockM, TileA::kLds, Shape::kThreads>(
            a_tile(stage), a, m0, kt * Cfg::kBlockK, tid);
        cp_async_tile_native<Cfg::kBlockK, Cfg::kBlockN, TileB::kLds, Shape::kThreads>(
            b_tile(stage), b, n0, kt * Cfg::kBlockK, tid);
      },
      [&](int stage) {
        const float* as = a_tile(stage);
        const float* bs = b_tile(stage);
#pragma unroll
        for (int k8 = 0; k8 < Cfg::kBlockK; k8 += kMmaK) {
          // Step 7's loads and MMAs, but each value x loaded becomes two TF32 operands,
          // hi = tf32(x) and lo = tf32(x − hi) (af[i].hi, af[i].lo; bf[j] alike: Tf32x3::from),
          // and each pair of fragments takes three mma.sync, the small products first
          // (Tf32x3::mma):
          //   acc[i][j] += af[i].lo · bf[j].hi;
          //   acc[i][j] += af[i].hi · bf[j].lo;
          //   acc[i][j] += af[i].hi · bf[j].hi;  // af[i].lo · bf[j].lo is dropped
          Tf32x3::Fragment<4> af[Shape::kFragsM];
#pragma unroll
          for (int i = 0; i < Shape::kFragsM; ++i)
            af[i] = load_a_fragment<TileA, Tf32x3>(as, warp_row + i * kMmaM + group, k8 + quad);
          Tf32x3::Fragment<2> bf[Shape::kFragsN];
#pragma unroll
          for (int j = 0; j < Shape::kFragsN; ++j)
            bf[j] = load_b_fragment<TileB, Tf32x3>(bs, warp_col + j * kMmaN + group, k8 + quad);
#pragma unroll
          for (int i = 0; i < Shape::kFragsM; ++i)
#pragma unroll
            for (int j = 0; j < Shape::kFragsN; ++j) Tf32x3::mma(acc[i][j], af[i], bf[j]);
        }
      });

#pragma unroll
  for (int i = 0; i < Shape::kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < Shape::kFragsN; ++j)
      store_accumulator(c, m0 + warp_row + i * kMmaM + group, n0 + warp_col + j * kMmaN + 2 * quad,
                        acc[i][j]);
}

// One config on p (M×N×K), K split as `plan` says.
template <class Cfg>
void launch_tile(const Problem& p, SplitK plan, cudaStream_t stream) {
  with_layout(p, [&](auto a_k_major, auto b_k_major) {
    constexpr bool KMajorA = decltype(a_k_major)::value, KMajorB = decltype(b_k_major)::value;
    launch_mma_sync_kernel<Cfg, KMajorA, KMajorB, tf32x3_kernel<Cfg, KMajorA, KMajorB>>(p, plan,
                                                                                        stream);
  });
}

}  // namespace

// C (M×N) = op(A) (M×K) · op(B) (K×N): the large tile when it gives every multiprocessor a block;
// otherwise the small one, K split until the grid fills the chip (plan_split_k, split_k.cuh).
void launch_tf32x3(const Problem& p, cudaStream_t stream) {
  const int sms = multiprocessor_count();
  if (tile_count<LargeTile::kBlockM, LargeTile::kBlockN>(p) >= sms) {
    launch_tile<LargeTile>(p, SplitK{1, p.k}, stream);
    return;
  }
  const long small_tiles = tile_count<SmallTile::kBlockM, SmallTile::kBlockN>(p);
  launch_tile<SmallTile>(p, plan_split_k<SmallTile::kBlockK>(p, small_tiles, sms), stream);
}

}  // namespace gemm::detail
