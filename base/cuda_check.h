// The project's lowest layer, shared by kernels/, data/, engine/ and the apps:
//   gemm_mlp::Error          the one error type
//   gemm_mlp::Device         where memory lives and work runs: the host (CPU) or a CUDA device
//   resolve_device(name)     the one choice of GPU or CPU from "auto", "cpu" or "cuda"
//   CUDA_CHECK(call)         a CUDA call whose failure throws gemm_mlp::Error naming the call,
//   CUDA_CHECK_LAUNCH()      file and line; the latter after a kernel launch
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace gemm_mlp {

// Every failure in the project (bad arguments or shapes, a missing or malformed file, a CUDA,
// cuBLAS or cuRAND error) is a gemm_mlp::Error whose message names the problem.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Device { CPU, CUDA };

inline const char* device_name(Device device) { return device == Device::CUDA ? "cuda" : "cpu"; }

// True when a CUDA device can be used. Any error from cudaGetDeviceCount (no driver, an
// insufficient driver, no device) counts as "no GPU". Inline, so that code asking only this
// needs cudart and no library of this project.
inline bool cuda_device_available() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // leave no error behind for the next CUDA call to report
    return false;
  }
  return count > 0;
}

// The device that `name` chooses: "cpu", "cuda", or "auto" (the GPU when one is usable, else the
// CPU). Throws Error for "cuda" without a usable GPU and for any other name; the message starts
// with `option`, e.g. "--device".
inline Device resolve_device(const std::string& name, const std::string& option = "device") {
  if (name == "cpu") return Device::CPU;
  if (name == "auto") return cuda_device_available() ? Device::CUDA : Device::CPU;
  if (name != "cuda") throw Error(option + " must be auto, cpu or cuda, got '" + name + "'");
  if (!cuda_device_available()) throw Error(option + " cuda, but no usable CUDA device was found");
  return Device::CUDA;
}

namespace detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* what, const char* file,
                                          int line) {
  throw Error(std::string("CUDA error ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) +
              ") in " + what + " at " + file + ":" + std::to_string(line));
}

}  // namespace detail
}  // namespace gemm_mlp

#define CUDA_CHECK(call)                                                                \
  do {                                                                                  \
    cudaError_t cuda_check_err_ = (call);                                               \
    if (cuda_check_err_ != cudaSuccess)                                                 \
      ::gemm_mlp::detail::throw_cuda_error(cuda_check_err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: catches bad launch configurations at once (without synchronising).
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
