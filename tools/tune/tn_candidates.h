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

// 4 warps of 32×32.
template <class A, int Stages, int BlocksPerSm>
struct Tile64x64 : MmaTileDefaults {
  using Arithmetic = A;
  static constexpr int kBlocksPerSm = BlocksPerSm;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 32, kWarpM = 32, kWarpN = 32,
                       kStages = Stages;
};
// 4 warps of 64×32.
template <class A, int Stages, int BlocksPerSm>
struct Tile128x64 : MmaTileDefaults {
  using Arithmetic = A;
  static constexpr int kBlocksPerSm = BlocksPerSm;
  static constexpr int kBlockM = 128, kBlockN = 64, kBlockK = 32, kWarpM = 64, kWarpN = 32,
                       kStages = Stages;
};
// 4 warps of 32×64.
template <class A, int Stages, int BlocksPerSm>
struct Tile64x128 : MmaTileDefaults {
  using Arithmetic = A;
  static constexpr int kBlocksPerSm = BlocksPerSm;
  static constexpr int kBlockM = 64, kBlockN = 128, kBlockK = 32, kWarpM = 32, kWarpN = 64,
                       kStages = Stages;
};
// 8 warps of 64×32.
template <class A, int Stages, int BlocksPerSm>
struct Tile128x128 : MmaTileDefaults {
  using Arithmetic = A;
  static constexpr int kBlocksPerSm = BlocksPerSm;
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32, kWarpM = 64, kWarpN = 32,
                       kStages = Stages;
};

using x1_64x64s3b2 = Tile64x64<X1, 3, 2>;
using x1_64x64s3b4 = Tile64x64<X1, 3, 4>;
using x1_64x64s4b2 = Tile64x64<X1, 4, 2>;
using x1_128x64s3b2 = Tile128x64<X1, 3, 2>;
using x1_64x128s3b2 = Tile64x128<X1, 3, 2>;
using x1_128x128s3b1 = Tile128x128<X1, 3, 1>;
using x1_128x128s3b2 = Tile128x128<X1, 3, 2>;
using x3_64x64s3b2 = Tile64x64<X3, 3, 2>;
using x3_64x64s3b4 = Tile64x64<X3, 3, 4>;
using x3_128x64s3b2 = Tile128x64<X3, 3, 2>;
using x3_64x128s3b2 = Tile64x128<X3, 3, 2>;
using x3_128x128s3b1 = Tile128x128<X3, 3, 1>;

template <class Cfg>
void launch(const gemm::Problem& p, cudaStream_t stream) {
  gemm::detail::launch_split_tile<Cfg, typename Cfg::Arithmetic, Cfg::kBlocksPerSm>(p, stream);
}

}  // namespace tune::tn_tiles

// Registers candidate `name` (a tile above) at place `order`.
#define TUNE_CANDIDATE(name, order)                           \
  static const bool tune_registered_ = ::tune::add_candidate( \
      {#name, ::tune::Kind::MmaSyncTn, order, ::tune::tn_tiles::launch<::tune::tn_tiles::name>})
