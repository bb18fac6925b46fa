// The step kernel in a build without GPU kernels (GEMM_MLP_GPU_KERNELS=OFF): it never serves, and
// says so (step_kernel.h).
#include "engine/step_kernel.h"

namespace engine {

struct StepKernel::Impl {};

namespace {
const char* const kNoKernels =
    "the step kernel is not in this build (GEMM_MLP_GPU_KERNELS=OFF; -DGEMM_MLP_GPU_KERNELS=ON "
    "builds it)";
}  // namespace

std::string StepKernel::unavailable_reason(const Context& ctx, Module&) {
  return ctx.is_cuda() ? kNoKernels : "the step kernel runs on the GPU only";
}
StepKernel::StepKernel(Context&, Module&, int, bool) { throw Error(kNoKernels); }
StepKernel::~StepKernel() = default;
void StepKernel::evaluate(Context&, const Tensor&, const void*, Metrics&) {
  throw Error(kNoKernels);
}
void StepKernel::train(Context&, const Tensor&, const void*, Metrics&, Optimizer&, const NextBatch*,
                       int) {
  throw Error(kNoKernels);
}
void StepKernel::check(Context&) { throw Error(kNoKernels); }
const Tensor& StepKernel::outputs() const { throw Error(kNoKernels); }
void StepKernel::set_wait_timeout(double) { throw Error(kNoKernels); }
void StepKernel::set_grid_limit(Context&, int) { throw Error(kNoKernels); }
void StepKernel::set_forward_splits(Context&, int) { throw Error(kNoKernels); }
void StepKernel::set_cluster_size(Context&, int) { throw Error(kNoKernels); }
void StepKernel::set_tile_per_block(Context&, bool) { throw Error(kNoKernels); }
void StepKernel::set_schedule_by_cost(Context&, bool) { throw Error(kNoKernels); }
int StepKernel::cluster_size() const { throw Error(kNoKernels); }
int StepKernel::grid_blocks(int, int) const { throw Error(kNoKernels); }
void StepKernel::record_timeline(bool) { throw Error(kNoKernels); }
std::vector<StepKernel::UnitTime> StepKernel::timeline(Context&) const { throw Error(kNoKernels); }

}  // namespace engine
