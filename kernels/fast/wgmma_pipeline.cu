// The production warp-specialised wgmma kernel's tiles (wgmma_pipeline.cuh), for tf32_fast and
// tf32x3_fast. Measured on the H200 (docs/results/tuning_wgmma_h200.txt, tools/tune/wgmma_tiles):
// two consumers of 128×128 on a 256×128 tile for large grids; 128×128 (two consumers of 64×128)
// with split-K when the large tile leaves multiprocessors idle. 3×TF32 stages are twice the size,
// so its tile is 128×128 in 3 stages (2 for TN, whose two operands both need staging slots):
// 256×128 stages of 96 KB would fit only twice, and not at all beside TN's.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N. sm_90a.
#include "kernels/fast/wgmma_pipeline.cuh"
#include "kernels/fast/wgmma_pipeline.h"

namespace gemm::detail {
namespace {

struct Tf32LargeTile {
  static constexpr int kBlockM = 256, kBlockN = 128, kStages = 4, kConsumers = 2;
  using Arithmetic = wgmma_ops::Tf32x1;
};
struct Tf32SmallTile {
  static constexpr int kBlockM = 128, kBlockN = 128, kStages = 4, kConsumers = 2;
  using Arithmetic = wgmma_ops::Tf32x1;
};
struct Tf32x3Tile {  // for full grids and, with split-K, for small ones
  static constexpr int kBlockM = 128, kBlockN = 128, kStages = 4, kConsumers = 2;
  using Arithmetic = wgmma_ops::Tf32x3;
};

}  // namespace

void launch_tf32_pipeline(const Problem& p, cudaStream_t stream) {
  launch_wgmma_pipeline_tiles<Tf32LargeTile, Tf32SmallTile>(p, stream);
}

void launch_tf32x3_pipeline(const Problem& p, cudaStream_t stream) {
  launch_wgmma_pipeline_tiles<Tf32x3Tile, Tf32x3Tile>(p, stream);
}

}  // namespace gemm::detail
