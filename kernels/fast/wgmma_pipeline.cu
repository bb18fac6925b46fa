// The production warp-specialised wgmma kernel's tiles (wgmma_pipeline.cuh), for tf32_fast and
// tf32x3_fast. Measured on the H200 (docs/results/tuning_wgmma_h200.txt, tools/tune/wgmma_tiles):
// two consumers of 128×128 on a 256×128 tile for large grids; 128×128 (two consumers of 64×128)
// with split-K when the large tile leaves multiprocessors idle. 3×TF32 stages are twice the size,
// so its tile is 128×128, its remainders in a ring of two parts beside 4 stages (3 for TN, whose
// two operands both need staging slots): 256×128 stages would fit only twice. Also the routing
// both variants share between the pipeline and the register-A kernel.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N. sm_90a.
#include "kernels/fast/k_major_copies.h"
#include "kernels/fast/wgmma_pipeline.cuh"
#include "kernels/fast/wgmma_pipeline.h"
#include "kernels/fast/wgmma_pipeline_persistent.cuh"

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

void launch_tf32_pipeline_persistent(const Problem& p, int blocks, cudaStream_t stream) {
  launch_wgmma_pipeline_persistent<Tf32SmallTile>(p, blocks, stream);
}

void launch_tf32x3_pipeline_persistent(const Problem& p, int blocks, cudaStream_t stream) {
  launch_wgmma_pipeline_persistent<Tf32x3Tile>(p, blocks, stream);
}

void launch_on_wgmma_kernels(const Problem& p, cudaStream_t stream, WgmmaLauncher register_a,
                             WgmmaLauncher pipeline) {
  const int sms = multiprocessor_count();
  if (k_major_copies_pay(p)) {
    if (operand_b<false>(p).vec4_ok && wgmma_register_a_fills_half(p, sms)) {
      launch_tn_on_k_major_a(p, stream, register_a);
    } else {
      launch_tn_on_k_major_copies(p, stream, pipeline);
    }
  } else if (wgmma_register_a_serves(p) && wgmma_register_a_fills_half(p, sms)) {
    register_a(p, stream);
  } else {
    pipeline(p, stream);
  }
}

}  // namespace gemm::detail
