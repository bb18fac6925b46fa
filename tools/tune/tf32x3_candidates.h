// Candidate split tiles of tf32x3_fast (kernels/fast/mma_sync_tiles.cuh's launch_split_tile), for
// tune_tf32x3_tiles: each a tile config as mma_sync_tiles.cuh names them, and kBlocksPerSm, the
// blocks per multiprocessor its split-K plan aims at; each runs on every shape of the sweep.
// Names: n: 16 columns, m: 16 rows, k: one K tile (s: output staged); bN: N blocks per
// multiprocessor. Shipped (kernels/fast/tf32x3_fast.cu): n64x16, m16x64, k64x128s where it fills
// the chip, else k16x64s (4 blocks per multiprocessor). tools/tune/CMakeLists.txt lists which to
// build, one translation unit each.
#pragma once

#include "kernels/fast/mma_sync_tiles.cuh"
#include "tools/tune/candidate.h"

namespace tune::tf32x3_tiles {

using gemm::detail::MmaTileDefaults;

struct n64x16 : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 4;
  static constexpr int kBlockM = 64, kBlockN = 16, kBlockK = 32, kWarpM = 16, kWarpN = 16,
                       kStages = 3;
};
struct n64x16b2 : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 2;
  static constexpr int kBlockM = 64, kBlockN = 16, kBlockK = 32, kWarpM = 16, kWarpN = 16,
                       kStages = 3;
};
struct n64x16b8 : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 8;
  static constexpr int kBlockM = 64, kBlockN = 16, kBlockK = 32, kWarpM = 16, kWarpN = 16,
                       kStages = 3;
};
struct n32x16 : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 4;
  static constexpr int kBlockM = 32, kBlockN = 16, kBlockK = 32, kWarpM = 16, kWarpN = 16,
                       kStages = 3;
};
struct n128x16 : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 4;
  static constexpr int kBlockM = 128, kBlockN = 16, kBlockK = 32, kWarpM = 32, kWarpN = 16,
                       kStages = 3;
};
struct m16x64 : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 4;
  static constexpr int kBlockM = 16, kBlockN = 64, kBlockK = 32, kWarpM = 16, kWarpN = 16,
                       kStages = 3;
};
struct m16x64b8 : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 8;
  static constexpr int kBlockM = 16, kBlockN = 64, kBlockK = 32, kWarpM = 16, kWarpN = 16,
                       kStages = 3;
};
struct m16x32 : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 4;
  static constexpr int kBlockM = 16, kBlockN = 32, kBlockK = 32, kWarpM = 16, kWarpN = 16,
                       kStages = 3;
};
struct m16x128 : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 4;
  static constexpr int kBlockM = 16, kBlockN = 128, kBlockK = 32, kWarpM = 16, kWarpN = 32,
                       kStages = 3;
};
struct k32x64 : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 4;
  static constexpr int kBlockM = 32, kBlockN = 64, kBlockK = 32, kWarpM = 16, kWarpN = 32,
                       kStages = 2;
};
struct k32x32 : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 4;
  static constexpr int kBlockM = 32, kBlockN = 32, kBlockK = 32, kWarpM = 16, kWarpN = 16,
                       kStages = 2;
};
struct k64x64 : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 4;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 32, kWarpM = 32, kWarpN = 32,
                       kStages = 2;
};
struct k64x128 : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 4;
  static constexpr int kBlockM = 64, kBlockN = 128, kBlockK = 32, kWarpM = 32, kWarpN = 64,
                       kStages = 2;
};
struct k128x128 : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 4;
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32, kWarpM = 64, kWarpN = 32,
                       kStages = 2;
};
struct k32x64s : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 4;
  static constexpr int kBlockM = 32, kBlockN = 64, kBlockK = 32, kWarpM = 16, kWarpN = 32,
                       kStages = 2;
  static constexpr bool kStagedOutput = true;
};
struct k16x64s : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 4;
  static constexpr int kBlockM = 16, kBlockN = 64, kBlockK = 32, kWarpM = 16, kWarpN = 16,
                       kStages = 2;
  static constexpr bool kStagedOutput = true;
};
struct k32x32s : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 4;
  static constexpr int kBlockM = 32, kBlockN = 32, kBlockK = 32, kWarpM = 16, kWarpN = 16,
                       kStages = 2;
  static constexpr bool kStagedOutput = true;
};
struct k64x64s : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 4;
  static constexpr int kBlockM = 64, kBlockN = 64, kBlockK = 32, kWarpM = 32, kWarpN = 32,
                       kStages = 2;
  static constexpr bool kStagedOutput = true;
};
struct k32x128s : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 4;
  static constexpr int kBlockM = 32, kBlockN = 128, kBlockK = 32, kWarpM = 16, kWarpN = 64,
                       kStages = 2;
  static constexpr bool kStagedOutput = true;
};
struct k64x128s : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 4;
  static constexpr int kBlockM = 64, kBlockN = 128, kBlockK = 32, kWarpM = 32, kWarpN = 64,
                       kStages = 2;
  static constexpr bool kStagedOutput = true;
};
struct k64x128s8 : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 4;
  static constexpr int kBlockM = 64, kBlockN = 128, kBlockK = 32, kWarpM = 32, kWarpN = 32,
                       kStages = 2;
  static constexpr bool kStagedOutput = true;
};
struct k128x128s : MmaTileDefaults {
  static constexpr int kBlocksPerSm = 4;
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32, kWarpM = 64, kWarpN = 32,
                       kStages = 2;
  static constexpr bool kStagedOutput = true;
};

template <class Cfg>
void launch(const gemm::Problem& p, cudaStream_t stream) {
  gemm::detail::launch_split_tile<Cfg, gemm::detail::mma_ops::Tf32x3, Cfg::kBlocksPerSm>(p, stream);
}

}  // namespace tune::tf32x3_tiles

// Registers candidate `name` (a tile above) at place `order`.
#define TUNE_CANDIDATE(name, order)                              \
  static const bool tune_registered_ =                           \
      ::tune::add_candidate({#name, ::tune::Kind::Tf32x3, order, \
                             ::tune::tf32x3_tiles::launch<::tune::tf32x3_tiles::name>})
