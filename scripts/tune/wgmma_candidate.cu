// A candidate tile of step 8 (-DTUNE_STEP=8, kernels/08_wgmma.cu: TUNE_CFG is WgmmaConfig's BM,
// BN, BK, stages) or step 9 (-DTUNE_STEP=9, kernels/09_wgmma_ws.cu: WsConfig's BM, BN, stages,
// consumer warpgroups), as both its large and its small tile, so that every shape runs it. See
// candidate.h for the other macros.
#define GEMM_TUNE_CANDIDATE
#if TUNE_STEP == 8
#include "kernels/08_wgmma.cu"
#define TUNE_LAUNCH_TILES launch_wgmma_tiles
#define TUNE_CONFIG WgmmaConfig<TUNE_CFG>
#elif TUNE_STEP == 9
#include "kernels/09_wgmma_ws.cu"
#define TUNE_LAUNCH_TILES launch_wgmma_ws_tiles
#define TUNE_CONFIG WsConfig<TUNE_CFG>
#else
#error "TUNE_STEP must be 8 or 9"
#endif
#include "scripts/tune/candidate.h"

namespace gemm::detail {
namespace {

void launch(const Problem& p, cudaStream_t stream) {
  TUNE_LAUNCH_TILES<TUNE_CONFIG, TUNE_CONFIG>(p, stream);
}

TUNE_REGISTER(tune::Kind::Wgmma, launch, nullptr);

}  // namespace
}  // namespace gemm::detail
