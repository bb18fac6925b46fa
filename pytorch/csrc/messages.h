// The torch op's error messages (gemm_mlp_ops.cpp), each built as one string and never through
// c10::str's stream: with torch 2.11's pip wheel on the H200, a number streamed from the op's
// library crashed the process (every refusal that named a size; those of strings alone did not),
// as a process with parts of two libstdc++ builds does (the wheel's libraries carry their
// toolchain's libstdc++_nonshared). std::to_string needs no locale.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <type_traits>

namespace gemm_mlp_torch {

inline std::string text(const char* s) { return s; }
inline std::string text(const std::string& s) { return s; }
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
std::string text(T value) {
  return std::to_string(value);
}
inline std::string text(at::IntArrayRef shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}
inline std::string text(const c10::Device& device) { return device.str(); }
inline std::string text(at::ScalarType type) { return c10::toString(type); }

// The parts, each as text() writes it, in one string.
template <class... Parts>
std::string message(const Parts&... parts) {
  return (std::string() + ... + text(parts));
}

}  // namespace gemm_mlp_torch

// TORCH_CHECK with its message from gemm_mlp_torch::message(), built only when the check fails.
#define GEMM_MLP_OP_CHECK(cond, ...) TORCH_CHECK(cond, ::gemm_mlp_torch::message(__VA_ARGS__))
