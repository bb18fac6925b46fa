// Argument checks shared by the network's ops and optimisers (internal to engine/).
#pragma once

#include <string>

#include "engine/runtime/context.h"
#include "engine/runtime/tensor.h"

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

}  // namespace engine::detail
