// The production pipeline's tiles (wgmma_pipeline.cuh), for tf32_fast and tf32x3_fast and for the
// persistent form that runs them tile by tile (wgmma_pipeline_persistent.cuh). Measured on the H200
// (docs/results/tuning_wgmma_h200.txt, tools/tune/wgmma_tiles): two consumers of 128×128 on a
// 256×128 tile for large grids; 128×128 (two consumers of 64×128) with split-K when the large tile
// leaves multiprocessors idle. 3×TF32 stages are twice the size, so its tile is 128×128, its
// remainders in a ring of two parts beside 4 stages (3 for TN, whose two operands both need
// staging slots): 256×128 stages would fit only twice. sm_90a only.
#pragma once

#include "kernels/wgmma.cuh"

namespace gemm::detail {

struct Tf32PipelineLargeTile {
  static constexpr int kBlockM = 256, kBlockN = 128, kStages = 4, kConsumers = 2;
  using Arithmetic = wgmma_ops::Tf32x1;
};
struct Tf32PipelineSmallTile {
  static constexpr int kBlockM = 128, kBlockN = 128, kStages = 4, kConsumers = 2;
  using Arithmetic = wgmma_ops::Tf32x1;
};
struct Tf32x3PipelineTile {  // for full grids and, with split-K, for small ones
  static constexpr int kBlockM = 128, kBlockN = 128, kStages = 4, kConsumers = 2;
  using Arithmetic = wgmma_ops::Tf32x3;
};

}  // namespace gemm::detail
