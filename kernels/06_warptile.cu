// Step 6 — warp tiling. The block tile is split into warp tiles and each warp tile into thread
// tiles, so the 32 threads of a warp read one compact patch of shared memory (fewer distinct
// addresses per fragment read, better reuse in the L1/shared pipe) and the hierarchy
// block tile → warp tile → thread tile is explicit in the code, as in CUTLASS.
// Change from 05: warp/thread index mapping; BK 8 → 32 (dynamic shared memory), so each barrier
// covers four times the work; each operand's shared tile kept in its global layout, as in 07
// (cp_async_tile_native), so every cp.async is 16 bytes: a K-contiguous operand (A with op N,
// B with op T) is no longer transposed one 4-byte copy per element, and its X-major tile is read
// a float4 along k per row (ThreadTile); and a smaller block tile with split-K (split_k.cuh) that
// the launcher picks when the 128×128 grid would leave multiprocessors idle (the MLP's M = 256
// shapes).
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#include "kernels/launchers.h"
#include "kernels/pipeline.cuh"
#include "kernels/split_k.cuh"
#include "kernels/thread_tile.cuh"

namespace gemm::detail {
namespace {

// One operand's shared tile, stored as the operand is in global memory so that every cp.async is
// 16 bytes: X-major tile[x·kLds + k] for a K-contiguous operand, K-major tile[k·kLds + x]
// otherwise. An X-major tile is read a float4 along k per row, neighbouring threads one row apart
// (thread_tile.cuh); a row stride of an odd number of float4s (≡ 4 mod 8 floats) puts the 8 rows
// one quarter-warp reads in 8 different 16-byte bank groups. K-major reads are neighbouring
// float4s, conflict-free with any stride; its 4 floats of padding are kept from 05.
template <int BK, int BX, bool KC>
struct SmemTile {
  static constexpr TileLayout kLayout = KC ? TileLayout::XMajor : TileLayout::KMajor;
  static constexpr int kLds = (KC ? BK : BX) + 4;
  static constexpr int kFloats = (KC ? BX : BK) * kLds;
  static_assert(!KC || kLds % 8 == 4,
                "an X-major row stride must be an odd number of float4s for conflict-free reads");
};

template <int BM_, int BN_, int BK_, int WM_, int WN_, int TM_, int TN_, int Stages_>
struct WarpTileConfig {
  static constexpr int kBm = BM_, kBn = BN_, kBk = BK_;  // block tile
  static constexpr int kWm = WM_, kWn = WN_;             // warp tile
  static constexpr int kTm = TM_, kTn = TN_;             // thread tile
  static constexpr int kStages = Stages_;
  static constexpr int kWarpsM = kBm / kWm, kWarpsN = kBn / kWn;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kLanesM = kWm / kTm, kLanesN = kWn / kTn;  // thread grid inside a warp
  static_assert(kBm % kWm == 0 && kBn % kWn == 0, "warp tiles must tile the block tile");
  static_assert(kWm % kTm == 0 && kWn % kTn == 0, "thread tiles must tile the warp tile");
  static_assert(kLanesM * kLanesN == 32, "a warp tile is covered by exactly 32 thread tiles");
  static_assert(kBk % 4 == 0, "K tiles are copied in 16-byte chunks");

  // What depends on the layout (A, B K-contiguous or not): the shared tiles, and the thread tile
  // that reads them. A thread's float4 groups (K-major) sit 4·kLanesM rows and 4·kLanesN columns
  // apart in its warp tile; its single rows or columns (X-major) kLanesM and kLanesN apart.
  template <bool KCA, bool KCB>
  struct For {
    using TileA = SmemTile<kBk, kBm, KCA>;
    using TileB = SmemTile<kBk, kBn, KCB>;
    static constexpr int kStageFloats = TileA::kFloats + TileB::kFloats;
    static constexpr int kSmemBytes = kStages * kStageFloats * int(sizeof(float));
    static_assert(kSmemBytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
    using Tile = ThreadTile<kTm, kTn, 4 * kLanesM, 4 * kLanesN, TileA::kLayout, TileB::kLayout>;
  };
};

// Large: 2 stages of BK = 32 measured fastest on the H200 among 7 shapes tried (docs/KERNELS.md),
// with the earlier transposing loads; scripts/tune/tune_tiles.sh sweeps both shapes again.
using LargeTile = WarpTileConfig<128, 128, 32, 64, 32, 8, 8, 2>;  // 256 threads
using SmallTile = WarpTileConfig<64, 64, 32, 32, 32, 8, 4, 4>;    // 128 threads

template <class Cfg, bool KCA, bool KCB>
__global__ void __launch_bounds__(Cfg::kThreads)
    warptile_kernel(Operand<KCA> a, Operand<KCB> b, Epilogue c, int k_per_split) {
  using L = typename Cfg::template For<KCA, KCB>;
  using Tile = typename L::Tile;
  enter_k_slice(a, b, c, k_per_split);
  extern __shared__ __align__(16) float smem[];  // per stage: A's tile, then B's (SmemTile)
  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int m0 = blockIdx.y * Cfg::kBm, n0 = blockIdx.x * Cfg::kBn;
  // Warp tile origin inside the block tile, then thread tile origin inside the warp tile.
  const int warp_row = (warp / Cfg::kWarpsN) * Cfg::kWm,
            warp_col = (warp % Cfg::kWarpsN) * Cfg::kWn;
  const int row0 = warp_row + (lane / Cfg::kLanesN) * Tile::kLaneRowStep;
  const int col0 = warp_col + (lane % Cfg::kLanesN) * Tile::kLaneColStep;

  Tile tile;
  auto a_tile = [&](int stage) { return smem + stage * L::kStageFloats; };
  auto b_tile = [&](int stage) { return smem + stage * L::kStageFloats + L::TileA::kFloats; };
  pipelined_k_loop<Cfg::kStages>(
      (a.extent_k + Cfg::kBk - 1) / Cfg::kBk,
      [&](int stage, int kt) {
        cp_async_tile_native<Cfg::kBk, Cfg::kBm, L::TileA::kLds, Cfg::kThreads>(
            a_tile(stage), a, m0, kt * Cfg::kBk, tid);
        cp_async_tile_native<Cfg::kBk, Cfg::kBn, L::TileB::kLds, Cfg::kThreads>(
            b_tile(stage), b, n0, kt * Cfg::kBk, tid);
      },
      [&](int stage) {
        tile.template multiply<Cfg::kBk, L::TileA::kLds, L::TileB::kLds>(a_tile(stage),
                                                                         b_tile(stage), row0, col0);
      });
  tile.store(c, m0, n0, row0, col0);
}

template <class Cfg>
void launch_with(const Problem& p, SplitK plan, cudaStream_t stream) {
  with_layout(p, [&](auto a_kc, auto b_kc) {
    constexpr bool KCA = decltype(a_kc)::value, KCB = decltype(b_kc)::value;
    constexpr auto kernel = warptile_kernel<Cfg, KCA, KCB>;
    constexpr int smem_bytes = Cfg::template For<KCA, KCB>::kSmemBytes;
    allow_dynamic_smem<kernel>(smem_bytes);
    dim3 grid = tile_grid<Cfg::kBm, Cfg::kBn>(p);
    grid.z = plan.splits;
    run_split_k(p, plan, stream, [&](const Epilogue& c, int k_per_split) {
      kernel<<<grid, Cfg::kThreads, smem_bytes, stream>>>(operand_a<KCA>(p), operand_b<KCB>(p), c,
                                                          k_per_split);
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
  launch_with<SmallTile>(p, plan_split_k<SmallTile::kBk>(p, small_tiles, sms, 2), stream);
}

}  // namespace gemm::detail
