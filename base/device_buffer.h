// gemm::DeviceBuffer<T>: an owned device array of size() elements of T, freed with the buffer.
// Move-only. For the code around the kernels that needs plain device arrays (gemm_bench, the tune
// programs in tools/tune/, test_gemm); the engine has its own Tensor.
//
//   gemm::DeviceBuffer<float> a(host);      // a device copy of a std::vector<float>
//   gemm::DeviceBuffer<float> c(m * n);     // uninitialised
//   c.fill_bytes(0xFF, stream);             // every float NaN
//   std::vector<float> out = c.download(stream);
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "base/cuda_check.h"

namespace gemm {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;

  // Room for `count` elements, uninitialised. A count of 0 still allocates one element, so that
  // data() is a valid device pointer.
  explicit DeviceBuffer(std::size_t count) : size_(count) {
    CUDA_CHECK(
        cudaMalloc(reinterpret_cast<void**>(&data_), std::max<std::size_t>(count, 1) * sizeof(T)));
  }

  // A device copy of `host`.
  explicit DeviceBuffer(const std::vector<T>& host, cudaStream_t stream = nullptr)
      : DeviceBuffer(host.size()) {
    upload(host.data(), host.size(), stream);
  }

  ~DeviceBuffer() {
    if (data_) cudaFree(data_);  // a destructor must not throw: an error here is dropped
  }

  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }

  // Copies `count` elements from the host into the start of the buffer, and waits for the copy
  // (after the work queued before it on `stream`).
  void upload(const T* host, std::size_t count, cudaStream_t stream = nullptr) {
    check_count(count);
    CUDA_CHECK(cudaMemcpyAsync(data_, host, count * sizeof(T), cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  // Copies the first `count` elements to the host once the work queued on `stream` is done.
  void download(T* host, std::size_t count, cudaStream_t stream = nullptr) const {
    check_count(count);
    CUDA_CHECK(cudaMemcpyAsync(host, data_, count * sizeof(T), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  std::vector<T> download(cudaStream_t stream = nullptr) const {
    std::vector<T> host(size_);
    download(host.data(), size_, stream);
    return host;
  }

  // Sets every byte to `value` on `stream`, without waiting (0xFF makes every float a NaN).
  void fill_bytes(int value, cudaStream_t stream = nullptr) {
    CUDA_CHECK(cudaMemsetAsync(data_, value, bytes(), stream));
  }

 private:
  void check_count(std::size_t count) const {
    if (count > size_)
      throw gemm_mlp::Error("DeviceBuffer: a copy of " + std::to_string(count) +
                            " elements, but the buffer holds " + std::to_string(size_));
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace gemm
