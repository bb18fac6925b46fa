// Step 5 — double buffering. Two shared buffers per operand: while the block multiplies K tile t
// from one, each thread already has its share of tile t+1 in flight from global memory into
// registers, and stores it into the other buffer once the multiply is done. The load latency
// hides behind the 512 FMAs of a K tile instead of stalling every thread at each tile boundary,
// and one barrier per tile replaces two.
// The staged loads cost registers: the 128×128 kernel would need 129 per thread and run one
// block per multiprocessor, so __launch_bounds__ asks for two (at most 128 registers).
// Change from 04: the K loop becomes multiply_double_buffered (register_tile.cuh) over two
// buffers; the thread tiles, their mapping and the tile choice are unchanged.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
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
  multiply_double_buffered<kBk, Cfg::kBlockM, Cfg::kBlockN, Cfg::kLds, Cfg::kThreads>(
      tile, a_tiles, b_tiles, a, b, m0, n0, row0, col0, tid);
  // TUTORIAL: the call above is, with load(t) a PrefetchedTile's fetch of K tile t into
  // registers and store(s) its stores into buffer s:
  //   load(0); store(0); __syncthreads();
  //   for (int kt = 0; kt < k_tiles; ++kt) {
  //     if (kt + 1 < k_tiles) load(kt + 1);        // in flight during the multiply
  //     tile.multiply(a_tiles[kt % 2], b_tiles[kt % 2]);
  //     if (kt + 1 < k_tiles) store((kt + 1) % 2);  // the buffer read one tile ago
  //     __syncthreads();
  //   }
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

}  // namespace

void launch_double_buffer(const Problem& p, cudaStream_t stream) {
  const int sms = multiprocessor_count();
  if (tile_count<LargeTile::kBlockM, LargeTile::kBlockN>(p) >= sms) {
    launch_tile<LargeTile>(p, SplitK{1, p.k}, stream);
    return;
  }
  const long tiles = tile_count<SmallTile::kBlockM, SmallTile::kBlockN>(p);
  launch_tile<SmallTile>(p, plan_split_k<kBk>(p, tiles, sms, kSmallTileBlocksPerSm), stream);
}

}  // namespace gemm::detail
