// Tensor: a 2-D float32 matrix in device or host memory.
//
// Shape: rows × cols, row-major and contiguous (row stride = cols). That is all the engine
// needs: activations are batch × features, a weight is out × in, a bias is 1 × out.
//
// Ownership: an owning tensor allocates (zero-filled) in its constructor and frees in its
// destructor; a view borrows memory it does not free (a batch handed over by the data loader, or
// the first n rows of a buffer sized for the largest batch: `first_rows(n)`). Views made from a
// const pointer, or from a const tensor, are read-only: asking them for a mutable pointer throws.
//
// No hidden copies: the copy constructor is deleted. Data crosses between host and device only
// through the explicit upload / download / copy_from helpers below.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/cuda_check.h"

namespace engine {

// Every failure in engine/ (bad shapes, mismatched devices, misuse, bad files, a CUDA or cuRAND
// error) is the project's gemm_mlp::Error, whose message names the problem. Tensors live on a
// gemm_mlp::Device; device_name gives "cpu" or "cuda" (all three from base/cuda_check.h).
using gemm_mlp::Device;
using gemm_mlp::device_name;
using gemm_mlp::Error;

class Tensor {
 public:
  Tensor() = default;                         // empty: 0 × 0, no storage
  Tensor(Device device, int rows, int cols);  // owning, zero-filled; rows, cols ≥ 1

  // Non-owning views of memory that lives on `device`; the memory must outlive the view.
  static Tensor view(Device device, float* data, int rows, int cols);
  static Tensor view(Device device, const float* data, int rows, int cols);  // read-only

  // An owning tensor filled from host values (row-major, rows·cols of them).
  static Tensor from_host(Device device, int rows, int cols, const std::vector<float>& values);

  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  Tensor(Tensor&& other) noexcept;
  Tensor& operator=(Tensor&& other) noexcept;
  ~Tensor();

  Device device() const { return device_; }
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  int64_t size() const { return static_cast<int64_t>(rows_) * cols_; }
  bool empty() const { return size() == 0; }
  bool owning() const { return owning_; }
  bool read_only() const { return read_only_; }
  std::string shape() const;  // "256x1024"

  float* data();              // throws on a read-only view
  const float* data() const;  // never throws

  // A view of rows [0, n): how a partial last batch uses buffers sized for the largest batch.
  Tensor first_rows(int n);
  Tensor first_rows(int n) const;  // read-only

  // Host ↔ tensor. `count` must equal size(). On the device these run on `stream` and wait for it
  // to finish, so they are for set-up, checkpoints and tests, not for the training step.
  void upload(const float* host, int64_t count, cudaStream_t stream = nullptr);
  void upload(const std::vector<float>& host, cudaStream_t stream = nullptr);
  std::vector<float> download(cudaStream_t stream = nullptr) const;

  // Copies src (same shape, any device) into this tensor; waits for `stream` when a device is
  // involved.
  void copy_from(const Tensor& src, cudaStream_t stream = nullptr);

 private:
  void release() noexcept;

  Device device_ = Device::CPU;
  int rows_ = 0, cols_ = 0;
  float* data_ = nullptr;
  bool owning_ = false;
  bool read_only_ = false;
};

// Class labels: a read-only vector of int32 in device or host memory, owning (uploaded once, from
// host values) or a view (a data loader's batch buffer). Same rules as Tensor: no hidden copies.
class LabelTensor {
 public:
  LabelTensor() = default;
  LabelTensor(Device device, const std::vector<int32_t>& host);  // owning; at least one label
  static LabelTensor view(Device device, const int32_t* data, int size);

  LabelTensor(const LabelTensor&) = delete;
  LabelTensor& operator=(const LabelTensor&) = delete;
  LabelTensor(LabelTensor&& other) noexcept;
  LabelTensor& operator=(LabelTensor&& other) noexcept;
  ~LabelTensor();

  Device device() const { return device_; }
  int size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const int32_t* data() const { return data_; }
  LabelTensor first(int n) const;  // a view of labels [0, n)

 private:
  void release() noexcept;

  Device device_ = Device::CPU;
  int32_t* data_ = nullptr;
  int size_ = 0;
  bool owning_ = false;
};

}  // namespace engine
