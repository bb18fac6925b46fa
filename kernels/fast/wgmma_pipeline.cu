// The production warp-specialised wgmma kernel's launchers for tf32_fast and tf32x3_fast, on the
// pipeline (wgmma_pipeline.cuh) and its tiles (wgmma_pipeline_tiles.cuh, which says why those
// tiles); also the routing both variants share between the pipeline and the register-A kernel.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N. sm_90a.
#include "kernels/fast/k_major_copies.h"
#include "kernels/fast/wgmma_pipeline.h"
#include "kernels/fast/wgmma_pipeline_kernel.cuh"
#include "kernels/fast/wgmma_pipeline_persistent.cuh"
#include "kernels/fast/wgmma_pipeline_tiles.cuh"

namespace gemm::detail {

void launch_tf32_pipeline(const Problem& p, cudaStream_t stream) {
  launch_wgmma_pipeline_tiles<Tf32PipelineLargeTile, Tf32PipelineSmallTile, Tf32PipelineNarrowTile>(
      p, stream);
}

void launch_tf32x3_pipeline(const Problem& p, cudaStream_t stream) {
  launch_wgmma_pipeline_tiles<Tf32x3PipelineTile, Tf32x3PipelineTile, Tf32x3PipelineNarrowTile>(
      p, stream);
}

void launch_tf32_pipeline_persistent(const Problem& p, int blocks, cudaStream_t stream) {
  launch_wgmma_pipeline_persistent<Tf32PipelineSmallTile>(p, blocks, stream);
}

void launch_tf32x3_pipeline_persistent(const Problem& p, int blocks, cudaStream_t stream) {
  launch_wgmma_pipeline_persistent<Tf32x3PipelineTile>(p, blocks, stream);
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
