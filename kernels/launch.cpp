// The switch of programmatic dependent launch (gemm.h, kernels/launch.cuh).
#include "kernels/launch.cuh"

#include <atomic>

#include "kernels/gemm.h"

namespace gemm {

namespace {
std::atomic<bool> dependent_launch_on{true};
}  // namespace

void set_dependent_launch(bool on) { dependent_launch_on = on; }
bool dependent_launch() { return dependent_launch_on; }

bool dependent_launch_active() {
  if (!dependent_launch_on) return false;
  int device = 0, major = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 9;
}

}  // namespace gemm
