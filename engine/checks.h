// Argument checks shared by the engine's ops (internal to engine/).
#pragma once

#include <curand.h>

#include <string>

#include "engine/context.h"
#include "engine/tensor.h"

namespace engine::detail {

// `what` names the op and the argument, e.g. "linear_forward: x".
inline void require_on(const Context& ctx, const Tensor& t, const std::string& what) {
  if (t.empty()) throw Error(what + " is an empty tensor");
  if (t.device() != ctx.device())
    throw Error(what + " lives on " + device_name(t.device()) + " but the context is " +
                device_name(ctx.device()));
}

inline void require_shape(const Tensor& t, int rows, int cols, const std::string& what) {
  if (t.rows() != rows || t.cols() != cols)
    throw Error(what + " is " + t.shape() + ", expected " + std::to_string(rows) + "x" +
                std::to_string(cols));
}

inline void curand_check(curandStatus_t status, const char* call, const char* file, int line) {
  if (status != CURAND_STATUS_SUCCESS)
    throw Error(std::string("cuRAND error ") + std::to_string(static_cast<int>(status)) + " in " +
                call + " at " + file + ":" + std::to_string(line));
}

}  // namespace engine::detail

#define CURAND_CHECK(call) ::engine::detail::curand_check((call), #call, __FILE__, __LINE__)
