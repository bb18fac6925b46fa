// Step 5 — double buffering. Two shared buffers per operand: while the block multiplies K tile t
// from one, each thread already has its share of tile t+1 in flight from global memory into
// registers, and stores it into the other buffer once the multiply is done. The load latency
// hides behind the 512 FMAs of a K tile instead of stalling every thread at each tile boundary,
// and one barrier per tile replaces two.
// The staged loads cost registers: the 128×128 kernel would need 129 per thread and run one
// block per multiprocessor, so __launch_bounds__ asks for two (at most 128 registers). The 64×64
// kernel's 95 leave room for 5 blocks where regtile's 79 left 6, and regtile's plan of K slices
// would spill past one wave: at 1024³, 768 blocks for 660 places, the last 108 a wave of their
// own, and 1.13× regtile's training time at 784-2048-2048-10, batch 512. So the plan takes fewer
// slices where they finish sooner in whole waves of what is resident (in_whole_waves, split_k.cuh).
// Change from 04: the K loop, written out in the kernel below: two buffers per operand, each K
// tile's loads split into a fetch into registers before the multiply and a store into the other
// buffer after it (PrefetchedTile, register_tile.cuh: load_tile_vec4 cut in two), and one barrier
// per K tile; the small tile's slices planned in whole waves. The thread tiles, their mapping and
// the tile choice are unchanged. (Step 6 runs the same loop through multiply_double_buffered,
// register_tile.cuh, which adds its sliced K.)
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
//
// Run it (a build in build/, scripts/train.sh makes one):
//   build/apps/gemm_bench/gemm_bench --variants regtile,dbuf --shapes 4096
//   scripts/train.sh --gemm dbuf --epochs 2
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
struct DoubleBufferShape : Cfg {
  static constexpr int kThreadsX = Cfg::kBlockN / Cfg::kThreadN;
  static constexpr int kThreadsY = Cfg::kBlockM / Cfg::kThreadM;
  static constexpr int kThreads = kThreadsX * kThreadsY;
  static constexpr int kLds = Cfg::kBlockM + 4;
  static constexpr int kTileFloats = kBk * kLds;
  // Blocks per multiprocessor the registers must leave room for: 128 registers a thread.
  static constexpr int kMinBlocks = 65536 / (kThreads * 128);
  static_assert(Cfg::kBlockM == Cfg::kBlockN, "one row stride serves both tiles");
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, at most 1024 threads");
  static_assert(2 * 2 * kTileFloats * sizeof(float) <= 48 * 1024,
                "static shared memory is limited to 48 KB");
  // Thread (ty, tx) owns rows ty·4 + g·kRowGap + 0..3 and columns tx·4 + g·kColGap + 0..3.
  using Tile = RegisterTile<Cfg::kThreadM, Cfg::kThreadN, 4 * kThreadsY, 4 * kThreadsX>;
};

// One block computes the BlockM×BlockN tile of C at (blockIdx.y, blockIdx.x) over its K slice
// (blockIdx.z, split_k.cuh).
template <class Cfg, bool KMajorA, bool KMajorB>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    double_buffer_kernel(Operand<KMajorA> a, Operand<KMajorB> b, Epilogue c, int k_per_split) {
  enter_k_slice(a, b, c, k_per_split);
  __shared__ __align__(16) float a_tiles[2][Cfg::kTileFloats];  // a_tiles[buffer][k][m]
  __shared__ __align__(16) float b_tiles[2][Cfg::kTileFloats];  // b_tiles[buffer][k][n]
  const int tid = threadIdx.y * Cfg::kThreadsX + threadIdx.x;
  const int m0 = blockIdx.y * Cfg::kBlockM, n0 = blockIdx.x * Cfg::kBlockN;
  const int row0 = threadIdx.y * 4, col0 = threadIdx.x * 4;

  typename Cfg::Tile tile;
  // This thread's share of the next K tile of A and of B, in registers between fetch and store.
  PrefetchedTile<kBk, Cfg::kBlockM, Cfg::kLds, Cfg::kThreads, KMajorA> next_a;
  PrefetchedTile<kBk, Cfg::kBlockN, Cfg::kLds, Cfg::kThreads, KMajorB> next_b;
  const int k_tiles = (a.extent_k + kBk - 1) / kBk;
  next_a.fetch(a, m0, 0, tid);  // K tile 0 into buffer 0
  next_b.fetch(b, n0, 0, tid);
  next_a.store(a_tiles[0], tid);
  next_b.store(b_tiles[0], tid);
  __syncthreads();
  for (int kt = 0; kt < k_tiles; ++kt) {
    const bool more = kt + 1 < k_tiles;
    if (more) {  // issued now, waited for only at the stores below
      next_a.fetch(a, m0, (kt + 1) * kBk, tid);
      next_b.fetch(b, n0, (kt + 1) * kBk, tid);
    }
    tile.template multiply<kBk, Cfg::kLds>(a_tiles[kt % 2], b_tiles[kt % 2], row0, col0);
    if (more) {  // the other buffer: every thread finished reading it before the last barrier
      next_a.store(a_tiles[(kt + 1) % 2], tid);
      next_b.store(b_tiles[(kt + 1) % 2], tid);
    }
    __syncthreads();  // one barrier per K tile: publishes the tile just stored
  }
  tile.store(c, m0, n0, row0, col0);
}

template <class Cfg>
void launch_tile(const Problem& p, SplitK plan, cudaStream_t stream) {
  using Shape = DoubleBufferShape<Cfg>;
  with_layout(p, [&](auto a_k_major, auto b_k_major) {
    constexpr bool KMajorA = decltype(a_k_major)::value, KMajorB = decltype(b_k_major)::value;
    dim3 grid = tile_grid<Cfg::kBlockM, Cfg::kBlockN>(p);
    grid.z = plan.splits;
    run_split_k(p, plan, stream, [&](const Epilogue& c, int k_per_split) {
      double_buffer_kernel<Shape, KMajorA, KMajorB>
          <<<grid, dim3(Shape::kThreadsX, Shape::kThreadsY), 0, stream>>>(
              operand_a<KMajorA>(p), operand_b<KMajorB>(p), c, k_per_split);
      CUDA_CHECK_LAUNCH();
    });
  });
}

// Blocks of the small tile's kernel at p's layout resident on one multiprocessor.
long small_tile_resident(const Problem& p) {
  using Shape = DoubleBufferShape<SmallTile>;
  int blocks = 0;
  with_layout(p, [&](auto a_k_major, auto b_k_major) {
    constexpr bool KMajorA = decltype(a_k_major)::value, KMajorB = decltype(b_k_major)::value;
    blocks = resident_blocks<double_buffer_kernel<Shape, KMajorA, KMajorB>>(Shape::kThreads);
  });
  return blocks;
}

}  // namespace

void launch_double_buffer(const Problem& p, cudaStream_t stream) {
  const int sms = multiprocessor_count();
  if (tile_count<LargeTile::kBlockM, LargeTile::kBlockN>(p) >= sms) {
    launch_tile<LargeTile>(p, SplitK{1, p.k}, stream);
    return;
  }
  const long tiles = tile_count<SmallTile::kBlockM, SmallTile::kBlockN>(p);
  const SplitK plan = plan_split_k<kBk>(p, tiles, sms, {.blocks_per_sm = kSmallTileBlocksPerSm});
  launch_tile<SmallTile>(p, in_whole_waves<kBk>(p, plan, tiles, small_tile_resident(p) * sms),
                         stream);
}

}  // namespace gemm::detail
