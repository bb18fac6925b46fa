// Programmatic dependent launch (compute capability 9.0 and newer) for the production kernels
// (fast/), the split-K reduction and the engine's kernels. A kernel launched with launch_kernel may
// start its blocks while the kernel before it on the stream still runs: as soon as every block of
// that kernel has called await_prior_kernels() (or finished). It then waits inside, in its own
// await_prior_kernels(), until that kernel has finished and its writes are visible. So a chain of
// short dependent kernels (a training step at M = 256) overlaps each launch with the kernel before
// it. A CUDA graph captured from such launches keeps them as programmatic edges.
//
// The contract: a kernel launched by launch_kernel calls await_prior_kernels() before it reads or
// writes global memory. In a kernel launched otherwise, await_prior_kernels() returns at once.
// gemm::set_dependent_launch(false) (gemm.h) launches everything in plain stream order instead.
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "base/cuda_check.h"
#include "base/dependent_launch.h"

namespace gemm {

// Every thread calls this before its block's first global access: it waits for the kernels this
// one depends on, then lets the next kernel on the stream start its blocks (which wait in turn).
__device__ __forceinline__ void await_prior_kernels() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
  cudaTriggerProgrammaticLaunchCompletion();
#endif
}

struct LaunchShape {
  dim3 grid;
  dim3 block;
  size_t smem_bytes = 0;
  cudaStream_t stream = nullptr;
  unsigned cluster_z = 1;  // thread block clusters of (1, 1, cluster_z) blocks where > 1
};

// kernel<<<shape>>>(args…) through cudaLaunchKernelEx, dependently where active; throws on a
// launch error.
template <class... Params, class... Args>
void launch_kernel(void (*kernel)(Params...), const LaunchShape& shape, Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = shape.grid;
  config.blockDim = shape.block;
  config.dynamicSmemBytes = shape.smem_bytes;
  config.stream = shape.stream;
  cudaLaunchAttribute attributes[2]{};
  unsigned count = 0;
  if (shape.cluster_z > 1) {
    attributes[count].id = cudaLaunchAttributeClusterDimension;
    attributes[count].val.clusterDim.x = 1;
    attributes[count].val.clusterDim.y = 1;
    attributes[count].val.clusterDim.z = shape.cluster_z;
    ++count;
  }
  if (dependent_launch_active()) {
    attributes[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attributes[count].val.programmaticStreamSerializationAllowed = 1;
    ++count;
  }
  config.attrs = attributes;
  config.numAttrs = count;
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

}  // namespace gemm
