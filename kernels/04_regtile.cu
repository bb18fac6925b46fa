// Step 4 — register blocking. Each thread computes an 8×8 tile of C held in registers. Per k it
// reads 8 values of A and 8 of B from shared memory, as four float4, and does the 64 FMAs of
// their outer product: each value read feeds 8 FMAs, where step 3's A value fed 4 and its B
// values 1. The block tile grows to 128×128 (BK = 8) to feed 256 such threads.
// A tile that large leaves the GPU idle on small problems: at M = 256, N = 1024 it makes 16
// blocks for 132 multiprocessors. So the launcher picks the tile from the problem: 128×128 when
// it gives every multiprocessor a block, else 64×64 (8×4 per thread) with K split across blocks
// until there are 4 per multiprocessor; the slices' partial products are summed in order by a
// second kernel (split_k.cuh).
// Change from 03: the accumulator becomes a RegisterTile (register_tile.cuh); both shared tiles
// are MN-major, so that a thread's values at one k are contiguous; the tile is chosen per problem.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
//
// Run it (a build in build/, scripts/train.sh makes one):
//   build/apps/gemm_bench/gemm_bench --variants vec,regtile --shapes 4096
//   scripts/train.sh --gemm regtile --epochs 2
#include "kernels/launchers.h"
#include "kernels/register_tile.cuh"
#include "kernels/split_k.cuh"

namespace gemm::detail {
namespace {

struct LargeTile {  // 16×16 threads of 8×8
  static constexpr int kBlockM = 128, kBlockN = 128, kThreadM = 8, kThreadN = 8;
};
struct SmallTile {  // 8×16 threads of 8×4
  static constexpr int kBlockM = 64, kBlockN = 64, kThreadM = 8, kThreadN = 4;
};
constexpr int kBk = 8;
constexpr int kSmallTileBlocksPerSm = 4;

template <class Cfg>
struct RegTileShape : Cfg {
  static constexpr int kThreadsX = Cfg::kBlockN / Cfg::kThreadN;
  static constexpr int kThreadsY = Cfg::kBlockM / Cfg::kThreadM;
  static constexpr int kThreads = kThreadsX * kThreadsY;
  static constexpr int kLds = Cfg::kBlockM + 4;  // ≡ 4 (mod 32) banks: the transposed stores of a
                                                 // K-major operand don't collide
  static_assert(Cfg::kBlockM == Cfg::kBlockN, "one row stride serves both tiles");
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, at most 1024 threads");
  // Thread (ty, tx) owns rows ty·4 + g·kRowGap + 0..3 and columns tx·4 + g·kColGap + 0..3.
  using Tile = RegisterTile<Cfg::kThreadM, Cfg::kThreadN, 4 * kThreadsY, 4 * kThreadsX>;
};

// One block computes the BlockM×BlockN tile of C at (blockIdx.y, blockIdx.x) over its K slice
// (blockIdx.z, split_k.cuh).
template <class Cfg, bool KMajorA, bool KMajorB>
__global__ void __launch_bounds__(Cfg::kThreads)
    regtile_kernel(Operand<KMajorA> a, Operand<KMajorB> b, Epilogue c, int k_per_split) {
  enter_k_slice(a, b, c, k_per_split);
  __shared__ __align__(16) float a_tile[kBk * Cfg::kLds];  // a_tile[k][m]
  __shared__ __align__(16) float b_tile[kBk * Cfg::kLds];  // b_tile[k][n]
  const int tid = threadIdx.y * Cfg::kThreadsX + threadIdx.x;
  const int m0 = blockIdx.y * Cfg::kBlockM, n0 = blockIdx.x * Cfg::kBlockN;
  const int row0 = threadIdx.y * 4, col0 = threadIdx.x * 4;

  typename Cfg::Tile tile;
  for (int k0 = 0; k0 < a.extent_k; k0 += kBk) {
    load_tile_vec4<kBk, Cfg::kBlockM, Cfg::kLds, Cfg::kThreads>(a_tile, a, m0, k0, tid);
    load_tile_vec4<kBk, Cfg::kBlockN, Cfg::kLds, Cfg::kThreads>(b_tile, b, n0, k0, tid);
    __syncthreads();
    tile.template multiply<kBk, Cfg::kLds>(a_tile, b_tile, row0, col0);
    // TUTORIAL: the call above is the register-blocked outer product, per k of the tile:
    //   for (int kk = 0; kk < kBk; ++kk) {
    //     float a[8], b[8];  // this thread's rows of A and columns of B at kk: 2 float4 each
    //     for (int i = 0; i < 8; ++i) a[i] = a_tile[kk * kLds + row0 + Tile::row(i)];
    //     for (int j = 0; j < 8; ++j) b[j] = b_tile[kk * kLds + col0 + Tile::col(j)];
    //     for (int i = 0; i < 8; ++i)
    //       for (int j = 0; j < 8; ++j) tile.acc[i][j] += a[i] * b[j];  // 64 FMAs, 16 reads
    //   }
    __syncthreads();
  }
  tile.store(c, m0, n0, row0, col0);
}

template <class Cfg>
void launch_tile(const Problem& p, SplitK plan, cudaStream_t stream) {
  using Shape = RegTileShape<Cfg>;
  with_layout(p, [&](auto a_k_major, auto b_k_major) {
    constexpr bool KMajorA = decltype(a_k_major)::value, KMajorB = decltype(b_k_major)::value;
    dim3 grid = tile_grid<Cfg::kBlockM, Cfg::kBlockN>(p);
    grid.z = plan.splits;
    run_split_k(p, plan, stream, [&](const Epilogue& c, int k_per_split) {
      regtile_kernel<Shape, KMajorA, KMajorB>
          <<<grid, dim3(Shape::kThreadsX, Shape::kThreadsY), 0, stream>>>(
              operand_a<KMajorA>(p), operand_b<KMajorB>(p), c, k_per_split);
      CUDA_CHECK_LAUNCH();
    });
  });
}

}  // namespace

void launch_regtile(const Problem& p, cudaStream_t stream) {
  const int sms = multiprocessor_count();
  if (tile_count<LargeTile::kBlockM, LargeTile::kBlockN>(p) >= sms) {
    launch_tile<LargeTile>(p, SplitK{1, p.k}, stream);
    return;
  }
  const long tiles = tile_count<SmallTile::kBlockM, SmallTile::kBlockN>(p);
  launch_tile<SmallTile>(
      p, plan_split_k<kBk>(p, tiles, sms, {.blocks_per_sm = kSmallTileBlocksPerSm}), stream);
}

}  // namespace gemm::detail
