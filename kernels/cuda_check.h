// Checked CUDA and cuBLAS calls: a failure throws gemm::Error naming the call, file and line.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "kernels/gemm.h"

namespace gemm::detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* what, const char* file,
                                          int line) {
  throw Error(std::string("CUDA error ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) +
              ") in " + what + " at " + file + ":" + std::to_string(line));
}

}  // namespace gemm::detail

#define CUDA_CHECK(call)                                                            \
  do {                                                                              \
    cudaError_t cuda_check_err_ = (call);                                           \
    if (cuda_check_err_ != cudaSuccess)                                             \
      ::gemm::detail::throw_cuda_error(cuda_check_err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: catches bad launch configurations at once (without synchronising).
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
