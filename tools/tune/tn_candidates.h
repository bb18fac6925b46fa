// Candidate mma.sync split tiles for the gradients whose B is MN-major (weight gradients, TN, and
// input gradients, NN), for tune_tn_tiles: each
// a tile config as kernels/fast/mma_sync_tiles.cuh names them, kBlocksPerSm (the blocks per
// multiprocessor its split-K plan aims at) and its arithmetic (x1: TF32, step 7's instructions;
// x3: 3×TF32). mma.sync reads its fragments from M- and N-major tiles as they are, where the wgmma
// pipeline transposes each such tile at every stage. Names: block M×N, s<stages>, b<blocks per SM>.
// tools/tune/CMakeLists.txt lists which to build, one translation unit each.
#pragma once

#include "kernels/fast/mma_sync_tiles.cuh"
#include "tools/tune/candidate.h"

namespace tune::tn_tiles {

using gemm::detail::MmaTileDefaults;
using X1 = gemm::detail::mma_ops::Tf32x1;
using X3 = gemm::detail::mma_ops::Tf32x3;

// A block tile of BM×BN in warp tiles of WM×WN, K tiles of 32.
template <class A, int BM, int BN, int WM, int WN, int Stages, int BlocksPerSm>
struct Tile : MmaTileDefaults {
  using Arithmetic = A;
  static constexpr int kBlocksPerSm = BlocksPerSm;
  static constexpr int kBlockM = BM, kBlockN = BN, kBlockK = 32, kWarpM = WM, kWarpN = WN,
                       kStages = Stages;
};

using x1_64x64s3b2 = Tile<X1, 64, 64, 32, 32, 3, 2>;  // 4 warps
using x1_64x64s3b4 = Tile<X1, 64, 64, 32, 32, 3, 4>;
using x1_64x64s4b2 = Tile<X1, 64, 64, 32, 32, 4, 2>;
using x1_128x64s3b2 = Tile<X1, 128, 64, 64, 32, 3, 2>;    // 4 warps
using x1_64x128s3b2 = Tile<X1, 64, 128, 32, 64, 3, 2>;    // 4 warps
using x1_128x128s3b1 = Tile<X1, 128, 128, 64, 32, 3, 1>;  // 8 warps
using x1_128x128s3b2 = Tile<X1, 128, 128, 64, 32, 3, 2>;
using x3_64x64s3b2 = Tile<X3, 64, 64, 32, 32, 3, 2>;
using x3_64x64s3b4 = Tile<X3, 64, 64, 32, 32, 3, 4>;
using x3_128x64s3b2 = Tile<X3, 128, 64, 64, 32, 3, 2>;
using x3_64x128s3b2 = Tile<X3, 64, 128, 32, 64, 3, 2>;
using x3_128x128s3b1 = Tile<X3, 128, 128, 64, 32, 3, 1>;

template <class Cfg>
void launch(const gemm::Problem& p, cudaStream_t stream) {
  gemm::detail::launch_split_tile<Cfg, typename Cfg::Arithmetic, Cfg::kBlocksPerSm>(p, stream);
}

}  // namespace tune::tn_tiles

// Registers candidate `name` (a tile above) at place `order`.
#define TUNE_CANDIDATE(name, order)                           \
  static const bool tune_registered_ = ::tune::add_candidate( \
      {#name, ::tune::Kind::MmaSyncTn, order, ::tune::tn_tiles::launch<::tune::tn_tiles::name>})
