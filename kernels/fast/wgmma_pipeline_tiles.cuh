// The production pipeline's tiles (wgmma_pipeline.cuh), for tf32_fast and tf32x3_fast and for the
// persistent form that runs them tile by tile (wgmma_pipeline_persistent.cuh). Measured on the H200
// (docs/results/tuning_wgmma_h200.txt, tools/tune/wgmma_tiles): two consumers of 128×128 on a
// 256×128 tile for large grids; 128×128 (two consumers of 64×128) with split-K when the large tile
// leaves multiprocessors idle. 3×TF32 stages are twice the size, so its tile is 128×128, its
// remainders in a ring of two parts beside 4 stages (3 for TN, whose two operands both need
// staging slots): 256×128 stages would fit only twice. A narrow tile of 64×128 for each, where
// a split K and two K-major operands let it pay (split_k_rules.cuh). sm_90a only.
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
// 64×128 tiles of one consumer warpgroup, for the split forward GEMMs (NT) at M = 128–512: twice
// the small tile's blocks, each with half its products a K tile and half its share to sum. As many
// stages as fit (8; 7 beside 3×TF32's remainders): a slice there is 4–8 K tiles, all of them in
// flight from the start, and the shared memory keeps a block to a multiprocessor.
struct Tf32PipelineNarrowTile {
  static constexpr int kBlockM = 64, kBlockN = 128, kStages = 8, kConsumers = 1;
  using Arithmetic = wgmma_ops::Tf32x1;
};
struct Tf32x3PipelineNarrowTile {
  static constexpr int kBlockM = 64, kBlockN = 128, kStages = 8, kConsumers = 1;
  using Arithmetic = wgmma_ops::Tf32x3;
};

}  // namespace gemm::detail
