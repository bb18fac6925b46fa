// The switch of programmatic dependent launch (gemm.h, kernels/launch.cuh), and the device check
// it shares with the cluster split-K (fast/cluster_split_k.cuh).
#include "kernels/launch.cuh"

#include <atomic>

#include "kernels/gemm.h"

namespace gemm {

namespace {
std::atomic<bool> dependent_launch_on{true};
}  // namespace

void set_dependent_launch(bool on) { dependent_launch_on = on; }
bool dependent_launch() { return dependent_launch_on; }

bool detail::compute_capability_9_or_newer() {
  int device = 0, major = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 9;
}

bool dependent_launch_active() {
  return dependent_launch_on && detail::compute_capability_9_or_newer();
}

}  // namespace gemm
