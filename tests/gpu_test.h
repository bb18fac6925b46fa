// GPU tests skip cleanly where there is no usable GPU (any error from cudaGetDeviceCount counts as
// none: without a driver it reports an insufficient driver, not zero devices). With
// GEMM_MLP_REQUIRE_GPU=1 in the environment a missing GPU fails the test instead, so that the GPU
// check cannot pass by skipping.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "kernels/gemm.h"

inline bool gpu_required_by_env() {
  const char* v = std::getenv("GEMM_MLP_REQUIRE_GPU");
  return v != nullptr && std::strcmp(v, "0") != 0 && *v != '\0';
}

#define GPU_TEST_OR_SKIP()                                                                     \
  do {                                                                                         \
    if (!::gemm::cuda_device_available()) {                                                    \
      if (gpu_required_by_env()) FAIL() << "GEMM_MLP_REQUIRE_GPU is set but no GPU is usable"; \
      GTEST_SKIP() << "no usable CUDA device";                                                 \
    }                                                                                          \
  } while (0)

// GPU_TEST_OR_SKIP, then a skip naming the reason when `variant` cannot run on this GPU (wgmma on
// a GPU other than Hopper).
#define VARIANT_TEST_OR_SKIP(variant)                                      \
  do {                                                                     \
    GPU_TEST_OR_SKIP();                                                    \
    if (const char* why_unavailable = ::gemm::unavailable_reason(variant)) \
      GTEST_SKIP() << why_unavailable;                                     \
  } while (0)
