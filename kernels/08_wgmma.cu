// Step 8 — Hopper's warpgroup MMA (wgmma), TF32 with fp32 accumulation. Four warps (a warpgroup)
// issue one asynchronous m64n128k8 instruction that reads both operands straight from shared
// memory through matrix descriptors: no fragment loads through registers, and the tensor cores
// run while the warps go on to issue the next copies.
// Change from 07: mma.sync with register fragments becomes wgmma with shared-memory descriptors.
// wgmma reads TF32 operands only K-major, in the 128-byte swizzled layout, so both tiles are
// stored that way (BK = 32 floats = one 128-byte row); a K-major operand is copied 16 bytes
// at a time, an MN-major one is transposed on the way in. The inputs are not rounded first:
// the tensor cores use the top 19 bits of each fp32 (TF32 truncation, within the TF32 tolerance).
// The K loop (below, in the kernel) issues a K tile's wgmma without waiting for them, commits them
// as one group and keeps that group in flight across the next barrier: a stage is refilled only
// once the group that read it has completed, so the kernel needs at least 3 stages.
// The tile follows the problem: 256×128 (4 warpgroups) where it gives every multiprocessor a
// block, else 128×128 (2) with K split across blocks. (A 64×128 tile of one warpgroup at small M
// was measured and did not pay in training: docs/NOTES.md, "8. wgmma".)
// sm_90a code runs on compute capability 9.0 only, so the launcher checks the GPU first.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
//
// Run it (a build in build/, scripts/train.sh makes one):
//   build/apps/gemm_bench/gemm_bench --variants tf32,wgmma --shapes 4096
//   scripts/train.sh --gemm wgmma --epochs 2
#include <cstdint>
#include <string>

#include "kernels/launchers.h"
#include "kernels/split_k.cuh"
#include "kernels/wgmma.cuh"

namespace gemm::detail {
namespace {

// Measured on the H200 (docs/NOTES.md, "8. wgmma"): 4 warpgroups on a 256×128 tile with 4 stages
// for large grids (each block reads less per multiply-add); 128×128 with 3 stages, two blocks per
// multiprocessor, when that tile count is needed to fill the chip.
struct LargeTile {
  static constexpr int kBlockM = 256, kBlockN = 128, kBlockK = 32, kStages = 4;
};
struct SmallTile {
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32, kStages = 3;
};

// Tile's derived sizes. Each warpgroup owns 64 rows × all BN columns.
template <class Tile>
struct WgmmaShape {
  static constexpr int kBm = Tile::kBlockM, kBn = Tile::kBlockN, kBk = Tile::kBlockK;
  static constexpr int kStages = Tile::kStages;
  static constexpr int kWarpgroups = kBm / kWgmmaM;
  static constexpr int kThreads = 128 * kWarpgroups;
  static constexpr int kStageFloats = (kBm + kBn) * kBk;
  // + 1 KB to align the tiles to the 1024-byte swizzle atoms.
  static constexpr int kSmemBytes = kStages * kStageFloats * int(sizeof(float)) + 1024;
  static_assert(kBm % kWgmmaM == 0, "the block's rows are split into 64-row warpgroup tiles");
  static_assert(kBn % kWgmmaN == 0, "the block's columns are split into 128-column wgmma tiles");
  static_assert(kBk % kPanelK == 0, "the K tile is a whole number of 32-float swizzled panels");
  static_assert(kStages >= 3,
                "a stage is being read by the previous wgmma batch while another "
                "is computed and a third is filled");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
};

// C[BM×BN] block tile at (blockIdx.y·BM, blockIdx.x·BN) over the K slice blockIdx.z; kThreads
// threads, warpgroup w computing rows 64w … 64w + 63 of the tile.
template <class Tile, bool KMajorA, bool KMajorB>
__global__ void __launch_bounds__(WgmmaShape<Tile>::kThreads)
    wgmma_kernel(Operand<KMajorA> a, Operand<KMajorB> b, Epilogue c, int k_per_split) {
  using S = WgmmaShape<Tile>;
  enter_k_slice(a, b, c, k_per_split);
  extern __shared__ float smem_raw[];
  float* smem = smem_raw + ((1024 - smem_address(smem_raw) % 1024) % 1024) / sizeof(float);
  const int tid = threadIdx.x, warpgroup = tid / 128;
  const int m0 = blockIdx.y * S::kBm, n0 = blockIdx.x * S::kBn;
  auto a_tile = [&](int stage) { return smem + stage * S::kStageFloats; };
  auto b_tile = [&](int stage) { return a_tile(stage) + S::kBm * S::kBk; };
  SwizzledTileLoader<S::kBm, S::kBk, S::kThreads, KMajorA> a_loader;
  SwizzledTileLoader<S::kBn, S::kBk, S::kThreads, KMajorB> b_loader;
  auto fetch = [&](int kt) {
    a_loader.fetch(a, m0, kt * S::kBk, tid);
    b_loader.fetch(b, n0, kt * S::kBk, tid);
  };
  auto store = [&](int stage) {
    a_loader.store(a_tile(stage), a, m0, tid);
    b_loader.store(b_tile(stage), b, n0, tid);
  };

  // K loop. One wgmma batch stays in flight while the next is issued, so step kt fills the stage
  // of tile kt − 2, which every warpgroup finished reading before this step's barrier; kAhead
  // tiles are filled ahead of the one computed. The cp.async groups count one per step.
  constexpr int kAhead = S::kStages - 2;
  const int k_tiles = (a.extent_k + S::kBk - 1) / S::kBk;
  float acc[1][S::kBn / kWgmmaN][64] = {};
  for (auto& tile : acc[0]) fence_operands(tile);
#pragma unroll
  for (int t = 0; t < kAhead; ++t) {
    if (t < k_tiles) {
      fetch(t);
      store(t);
    }
    cp_async_commit();
  }
  if (kAhead < k_tiles) fetch(kAhead);
  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<kAhead - 1>();
    fence_proxy_async();  // this thread's writes of tile kt, visible to wgmma after the barrier
    __syncthreads();
    const int stage = kt % S::kStages;
    // This warpgroup's products of K tile kt, acc[64 × kBn] += A[64 × kBk] · B[kBk × kBn], issued
    // without waiting: one wgmma.m64n128k8 per k step of 8 and 128 columns, each reading both
    // operands from the swizzled tiles through descriptors. A k step is 8 floats (32 bytes) into
    // each 128-byte swizzled row of a 32-k panel; a warpgroup's 64 rows of A lie 8 whole 1024-byte
    // atoms further on, B's next 128 columns 16, so every descriptor starts on an atom row.
    const float* b_cols = b_tile(stage);                                  // all BN columns
    const float* a_rows = a_tile(stage) + warpgroup * kWgmmaM * kPanelK;  // this warpgroup's rows
    wgmma_fence();  // the accumulators' registers are ready for the asynchronous MMAs
#pragma unroll
    for (int kk = 0; kk < S::kBk; kk += kWgmmaK) {
      const int panel = kk / kPanelK, k_in_panel = kk % kPanelK;
      const float* a_k = a_rows + panel * S::kBm * kPanelK + k_in_panel;
      const float* b_k = b_cols + panel * S::kBn * kPanelK + k_in_panel;
#pragma unroll
      for (int j = 0; j < S::kBn / kWgmmaN; ++j) {  // acc[0][j]: columns 128j … 128j + 127
        const float* b_j = b_k + j * kWgmmaN * kPanelK;
        wgmma_m64n128k8_ss(acc[0][j], sw128_descriptor(a_k), sw128_descriptor(b_j));
      }
    }
    wgmma_commit();  // one group, waited for by wgmma_wait below
    if (kt + kAhead < k_tiles) store((kt + kAhead) % S::kStages);
    cp_async_commit();
    if (kt + kAhead + 1 < k_tiles) fetch(kt + kAhead + 1);
    wgmma_wait<1>();  // acc is not touched here: the batch just issued still writes it
  }
  wgmma_wait<0>();
  for (auto& tile : acc[0]) fence_operands(tile);
  store_warpgroup_tile<S::kBn>(c, acc[0], m0 + warpgroup * kWgmmaM, n0, tid % 128);
}

// Runs the kernel with tile Tile on p, K split as `plan` says.
template <class Tile>
void launch_tile(const Problem& p, SplitK plan, cudaStream_t stream) {
  with_layout(p, [&](auto a_k_major, auto b_k_major) {
    constexpr bool KMajorA = decltype(a_k_major)::value, KMajorB = decltype(b_k_major)::value;
    using S = WgmmaShape<Tile>;
    constexpr auto kernel = wgmma_kernel<Tile, KMajorA, KMajorB>;
    const Operand<KMajorA> a = operand_a<KMajorA>(p);
    const Operand<KMajorB> b = operand_b<KMajorB>(p);
    allow_dynamic_smem<kernel>(S::kSmemBytes);
    dim3 grid = tile_grid<S::kBm, S::kBn>(p);
    grid.z = plan.splits;
    run_split_k(p, plan, stream, [&](const Epilogue& c, int k_per_split) {
      kernel<<<grid, S::kThreads, S::kSmemBytes, stream>>>(a, b, c, k_per_split);
      CUDA_CHECK_LAUNCH();
    });
  });
}

}  // namespace

const char* wgmma_unavailable() {
  int device = 0, major = 0, minor = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major == 9 && minor == 0) return nullptr;
  return "variants 'wgmma' and 'wgmma_ws' need a Hopper GPU (compute capability 9.0): their sm_90a "
         "code runs on no other";
}

// The large tile where it gives every multiprocessor a block; otherwise the small one, with K
// split across blocks until the grid fills the chip (split_k.cuh).
void launch_wgmma(const Problem& p, cudaStream_t stream) {
  if (const char* why = wgmma_unavailable()) throw Error(std::string("gemm: ") + why);
  const int sms = multiprocessor_count();
  if (tile_count<LargeTile::kBlockM, LargeTile::kBlockN>(p) >= sms)
    return launch_tile<LargeTile>(p, SplitK{1, p.k}, stream);
  const long tiles = tile_count<SmallTile::kBlockM, SmallTile::kBlockN>(p);
  launch_tile<SmallTile>(p, plan_split_k<SmallTile::kBlockK>(p, tiles, sms), stream);
}

}  // namespace gemm::detail
