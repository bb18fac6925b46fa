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
// flight from the start, and the shared memory keeps a block to a multiprocessor. kKTileCost: a K
// tile's cost in quarter small K tiles (split_k_rules.cuh), from the H200 (warm, against the
// small tile split: docs/results/archive/small_m_candidates_warm.csv, c8): in TF32, 3/4 of the
// small tile's (256×1024×784 NT, 4 slices of 7 K tiles against 5 of 5: 0.92×); in 3×TF32, whose
// one consumer warpgroup also prepares the remainders alone, 5/4 (there 1.29×, and 0.85–0.87× at
// M = 128, slices as long as the small tile's).
struct Tf32PipelineNarrowTile {
  static constexpr int kBlockM = 64, kBlockN = 128, kStages = 8, kConsumers = 1;
  static constexpr long kKTileCost = 3;
  using Arithmetic = wgmma_ops::Tf32x1;
};
struct Tf32x3PipelineNarrowTile {
  static constexpr int kBlockM = 64, kBlockN = 128, kStages = 8, kConsumers = 1;
  static constexpr long kKTileCost = 5;
  using Arithmetic = wgmma_ops::Tf32x3;
};

}  // namespace gemm::detail
