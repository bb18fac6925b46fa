// A candidate split tile of tf32x3_fast (kernels/fast/tf32x3_fast.cu): TUNE_CFG is the MmaConfig's
// arguments (BM, BN, BK, WM, WN, stages), TUNE_BPS the blocks per multiprocessor its split-K plan
// aims at; it runs on every shape of the sweep. See candidate.h for the other macros.
#define GEMM_TUNE_CANDIDATE
#include "kernels/fast/tf32x3_fast.cu"
#include "scripts/tune/candidate.h"

namespace gemm::detail {
namespace {

void launch(const Problem& p, cudaStream_t stream) {
  launch_split_tile<MmaConfig<TUNE_CFG>, TUNE_BPS>(p, stream);
}

TUNE_REGISTER(tune::Kind::Tf32x3, launch, nullptr);

}  // namespace
}  // namespace gemm::detail
