// ContextValue<T>: one value in a context's memory, where the work that updates it runs: on the
// GPU (so that kernels, and CUDA graphs replaying them, update it without a host write) or on the
// host. T is trivially copyable and starts at T{}. The metrics' counters and an optimiser's step
// counter are such values.
#pragma once

#include <cuda_runtime_api.h>

#include <type_traits>

#include "base/cuda_check.h"
#include "engine/runtime/context.h"

namespace engine {

template <class T>
class ContextValue {
  static_assert(std::is_trivially_copyable_v<T>, "copied as bytes between host and device");

 public:
  explicit ContextValue(Context& ctx) : device_(ctx.device()) {
    if (device_ == Device::CUDA) {
      CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&value_), sizeof(T)));
      try {
        zero(ctx);
      } catch (...) {
        cudaFree(value_);  // a throwing constructor gets no destructor call
        throw;
      }
    } else {
      value_ = new T{};
    }
  }
  ~ContextValue() {
    if (device_ == Device::CUDA)
      cudaFree(value_);  // no throwing from a destructor
    else
      delete value_;
  }
  ContextValue(const ContextValue&) = delete;
  ContextValue& operator=(const ContextValue&) = delete;

  Device device() const { return device_; }
  T* get() const { return value_; }  // in device memory on the GPU

  // value = T{}, queued on the stream.
  void zero(Context& ctx) {
    if (device_ == Device::CUDA)
      CUDA_CHECK(cudaMemsetAsync(value_, 0, sizeof(T), ctx.stream()));
    else
      *value_ = T{};
  }
  // Waits for the copy.
  void write(const T& value) {
    if (device_ == Device::CUDA)
      CUDA_CHECK(cudaMemcpy(value_, &value, sizeof(T), cudaMemcpyHostToDevice));
    else
      *value_ = value;
  }
  // Waits for the stream.
  T read(Context& ctx) const {
    if (device_ != Device::CUDA) return *value_;
    T value{};
    CUDA_CHECK(cudaMemcpyAsync(&value, value_, sizeof(T), cudaMemcpyDeviceToHost, ctx.stream()));
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
    return value;
  }

 private:
  Device device_;
  T* value_ = nullptr;
};

}  // namespace engine
