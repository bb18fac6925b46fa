// CURAND_CHECK(call): throws gemm_mlp::Error naming the cuRAND call, its status and where it was
// made when it fails (internal to engine/).
#pragma once

#include <curand.h>

#include <string>

#include "base/cuda_check.h"

namespace engine::detail {

inline void curand_check(curandStatus_t status, const char* call, const char* file, int line) {
  if (status != CURAND_STATUS_SUCCESS)
    throw gemm_mlp::Error(std::string("cuRAND error ") + std::to_string(static_cast<int>(status)) +
                          " in " + call + " at " + file + ":" + std::to_string(line));
}

}  // namespace engine::detail

#define CURAND_CHECK(call) ::engine::detail::curand_check((call), #call, __FILE__, __LINE__)
