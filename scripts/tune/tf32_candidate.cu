// A candidate large tile of step 7 (kernels/07_tf32.cu): TUNE_CFG is the MmaConfig's arguments
// (BM, BN, BK, WM, WN, stages); the small tile stays as shipped, and the step's own tile choice
// runs. See candidate.h for the other macros.
#define GEMM_TUNE_CANDIDATE
#include "kernels/07_tf32.cu"
#include "scripts/tune/candidate.h"

namespace gemm::detail {
namespace {

void launch(const Problem& p, cudaStream_t stream) {
  launch_tf32_tiles<MmaConfig<TUNE_CFG>, SmallTile>(p, stream);
}

TUNE_REGISTER(tune::Kind::Tf32Large, launch, nullptr);

}  // namespace
}  // namespace gemm::detail
