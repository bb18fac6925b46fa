// The switch of programmatic dependent launch (dependent_launch.h, launch.cuh), and the device
// check it shares with the cluster split-K (kernels/fast/cluster_split_k.cuh).
#include <cuda_runtime_api.h>

#include <atomic>

#include "base/cuda_check.h"
#include "base/dependent_launch.h"

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
