// Step 6 — warp tiling. The block tile is split into warp tiles and each warp tile into thread
// tiles, so the 32 threads of a warp read one compact patch of shared memory (fewer distinct
// addresses per fragment read, better reuse in the L1/shared pipe) and the hierarchy
// block tile → warp tile → thread tile is explicit in the code, as in CUTLASS.
// Change from 05: warp/thread index mapping; BK 8 → 32 (dynamic shared memory), so each barrier
// covers four times the work; and a smaller block tile with split-K (split_k.cuh) that
// the launcher picks when the 128×128 grid would leave multiprocessors idle (the MLP's M = 256
// shapes).
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#include "kernels/launchers.h"
#include "kernels/pipeline.cuh"
#include "kernels/split_k.cuh"
#include "kernels/thread_tile.cuh"

namespace gemm::detail {
namespace {

template <int BM_, int BN_, int BK_, int WM_, int WN_, int TM_, int TN_, int Stages_>
struct WarpTileConfig {
  static constexpr int kBm = BM_, kBn = BN_, kBk = BK_;  // block tile
  static constexpr int kWm = WM_, kWn = WN_;             // warp tile
  static constexpr int kTm = TM_, kTn = TN_;             // thread tile
  static constexpr int kStages = Stages_;
  static constexpr int kWarpsM = kBm / kWm, kWarpsN = kBn / kWn;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kLanesM = kWm / kTm, kLanesN = kWn / kTn;  // thread grid inside a warp
  static constexpr int kLdsA = kBm + 4, kLdsB = kBn + 4;
  static constexpr int kStageFloats = kBk * (kLdsA + kLdsB);
  static constexpr int kSmemBytes = kStages * kStageFloats * int(sizeof(float));
  static_assert(kBm % kWm == 0 && kBn % kWn == 0, "warp tiles must tile the block tile");
  static_assert(kWm % kTm == 0 && kWn % kTn == 0, "thread tiles must tile the warp tile");
  static_assert(kLanesM * kLanesN == 32, "a warp tile is covered by exactly 32 thread tiles");
  static_assert(kBk % 4 == 0, "K tiles are copied in 16-byte chunks");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
  // A thread's float4 groups sit kWm/(kTm/4) rows and kWn/(kTn/4) columns apart in its warp tile.
  using Tile = ThreadTile<kTm, kTn, kWm / (kTm / 4), kWn / (kTn / 4)>;
};

// Large: 2 stages of BK = 32 measured fastest on the H200 among 7 shapes tried (docs/KERNELS.md).
using LargeTile = WarpTileConfig<128, 128, 32, 64, 32, 8, 8, 2>;  // 256 threads
using SmallTile = WarpTileConfig<64, 64, 16, 32, 32, 8, 4, 3>;    // 128 threads

template <class Cfg, bool KCA, bool KCB>
__global__ void __launch_bounds__(Cfg::kThreads)
    warptile_kernel(Operand<KCA> a, Operand<KCB> b, Epilogue c, int k_per_split) {
  enter_k_slice(a, b, c, k_per_split);
  extern __shared__ __align__(16) float smem[];  // per stage: a_tile[k][m], then b_tile[k][n]
  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int m0 = blockIdx.y * Cfg::kBm, n0 = blockIdx.x * Cfg::kBn;
  // Warp tile origin inside the block tile, then thread tile origin inside the warp tile.
  const int warp_row = (warp / Cfg::kWarpsN) * Cfg::kWm,
            warp_col = (warp % Cfg::kWarpsN) * Cfg::kWn;
  const int row0 = warp_row + (lane / Cfg::kLanesN) * 4;
  const int col0 = warp_col + (lane % Cfg::kLanesN) * 4;

  typename Cfg::Tile tile;
  auto a_tile = [&](int stage) { return smem + stage * Cfg::kStageFloats; };
  auto b_tile = [&](int stage) { return smem + stage * Cfg::kStageFloats + Cfg::kBk * Cfg::kLdsA; };
  pipelined_k_loop<Cfg::kStages>(
      (a.extent_k + Cfg::kBk - 1) / Cfg::kBk,
      [&](int stage, int kt) {
        cp_async_tile_kmajor<Cfg::kBk, Cfg::kBm, Cfg::kLdsA, Cfg::kThreads>(a_tile(stage), a, m0,
                                                                            kt * Cfg::kBk, tid);
        cp_async_tile_kmajor<Cfg::kBk, Cfg::kBn, Cfg::kLdsB, Cfg::kThreads>(b_tile(stage), b, n0,
                                                                            kt * Cfg::kBk, tid);
      },
      [&](int stage) {
        tile.template multiply<Cfg::kBk, Cfg::kLdsA, Cfg::kLdsB>(a_tile(stage), b_tile(stage), row0,
                                                                 col0);
      });
  tile.store(c, m0, n0, row0, col0);
}

template <class Cfg>
void launch_with(const Problem& p, SplitK plan, cudaStream_t stream) {
  with_layout(p, [&](auto a_kc, auto b_kc) {
    constexpr bool KCA = decltype(a_kc)::value, KCB = decltype(b_kc)::value;
    constexpr auto kernel = warptile_kernel<Cfg, KCA, KCB>;
    allow_dynamic_smem<kernel>(Cfg::kSmemBytes);
    dim3 grid = tile_grid<Cfg::kBm, Cfg::kBn>(p);
    grid.z = plan.splits;
    run_split_k(p, plan, stream, [&](const Epilogue& c, int k_per_split) {
      kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(operand_a<KCA>(p), operand_b<KCB>(p),
                                                               c, k_per_split);
      CUDA_CHECK_LAUNCH();
    });
  });
}

}  // namespace

// The large block tile when it gives every multiprocessor a block; otherwise the small one, with
// K split across blocks until the grid fills the chip.
void launch_warptile(const Problem& p, cudaStream_t stream) {
  const int sms = multiprocessor_count();
  const long large_tiles = tile_count<LargeTile::kBm, LargeTile::kBn>(p);
  if (large_tiles >= sms) {
    launch_with<LargeTile>(p, SplitK{1, p.k}, stream);
    return;
  }
  const long small_tiles = tile_count<SmallTile::kBm, SmallTile::kBn>(p);
  launch_with<SmallTile>(p, plan_split_k<SmallTile::kBk>(p, small_tiles, sms), stream);
}

}  // namespace gemm::detail
