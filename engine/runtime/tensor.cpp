#include "engine/runtime/tensor.h"

#include <cstring>
#include <utility>

#include "base/cuda_check.h"

namespace engine {

namespace {

void require_shape(int rows, int cols, const char* what) {
  if (rows < 1 || cols < 1)
    throw Error(std::string("tensor: ") + what + " needs rows and cols >= 1, got " +
                std::to_string(rows) + "x" + std::to_string(cols));
}

}  // namespace

Tensor::Tensor(Device device, int rows, int cols) : device_(device), rows_(rows), cols_(cols) {
  require_shape(rows, cols, "an owning tensor");
  const size_t bytes = static_cast<size_t>(size()) * sizeof(float);
  if (device == Device::CUDA) {
    CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), bytes));
    // cudaMemset is ordered on the legacy default stream, which every stream created with
    // cudaStreamCreate (as Context does) waits for.
    const cudaError_t err = cudaMemset(data_, 0, bytes);
    if (err != cudaSuccess) {
      cudaFree(data_);
      CUDA_CHECK(err);
    }
  } else {
    data_ = new float[size()]();
  }
  owning_ = true;
}

Tensor Tensor::view(Device device, float* data, int rows, int cols) {
  require_shape(rows, cols, "a view");
  if (data == nullptr) throw Error("tensor: a view of a null pointer");
  Tensor t;
  t.device_ = device;
  t.rows_ = rows;
  t.cols_ = cols;
  t.data_ = data;
  return t;
}

Tensor Tensor::view(Device device, const float* data, int rows, int cols) {
  // The const_cast is safe because read_only_ stops every path that would write through it.
  Tensor t = view(device, const_cast<float*>(data), rows, cols);
  t.read_only_ = true;
  return t;
}

Tensor Tensor::from_host(Device device, int rows, int cols, const std::vector<float>& values) {
  Tensor t(device, rows, cols);
  t.upload(values);
  return t;
}

Tensor::Tensor(Tensor&& other) noexcept { *this = std::move(other); }

Tensor& Tensor::operator=(Tensor&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    rows_ = std::exchange(other.rows_, 0);
    cols_ = std::exchange(other.cols_, 0);
    data_ = std::exchange(other.data_, nullptr);
    owning_ = std::exchange(other.owning_, false);
    read_only_ = std::exchange(other.read_only_, false);
  }
  return *this;
}

Tensor::~Tensor() { release(); }

void Tensor::release() noexcept {
  if (owning_ && data_ != nullptr) {
    if (device_ == Device::CUDA)
      cudaFree(data_);  // a destructor must not throw; a failed free has nothing left to save
    else
      delete[] data_;
  }
  data_ = nullptr;
  owning_ = false;
}

std::string Tensor::shape() const { return std::to_string(rows_) + "x" + std::to_string(cols_); }

float* Tensor::data() {
  if (read_only_) throw Error("tensor: mutable access to a read-only view (" + shape() + ")");
  return data_;
}

const float* Tensor::data() const { return data_; }

Tensor Tensor::first_rows(int n) {
  if (n < 1 || n > rows_)
    throw Error("tensor: first_rows(" + std::to_string(n) + ") of a " + shape() + " tensor");
  Tensor t = view(device_, data_, n, cols_);
  t.read_only_ = read_only_;
  return t;
}

Tensor Tensor::first_rows(int n) const {
  if (n < 1 || n > rows_)
    throw Error("tensor: first_rows(" + std::to_string(n) + ") of a " + shape() + " tensor");
  return view(device_, static_cast<const float*>(data_), n, cols_);
}

namespace {

void require_count(int64_t count, const Tensor& t, const char* what) {
  if (count != t.size())
    throw Error(std::string("tensor: ") + what + " of " + std::to_string(count) +
                " values into a " + t.shape() + " tensor (" + std::to_string(t.size()) +
                " values)");
}

}  // namespace

void Tensor::upload(const float* host, int64_t count, cudaStream_t stream) {
  require_count(count, *this, "upload");
  if (empty()) return;
  float* dst = data();
  const size_t bytes = static_cast<size_t>(count) * sizeof(float);
  if (device_ == Device::CUDA) {
    CUDA_CHECK(cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  } else {
    std::memcpy(dst, host, bytes);
  }
}

void Tensor::upload(const std::vector<float>& host, cudaStream_t stream) {
  upload(host.data(), static_cast<int64_t>(host.size()), stream);
}

std::vector<float> Tensor::download(cudaStream_t stream) const {
  std::vector<float> out(static_cast<size_t>(size()));
  if (empty()) return out;
  const size_t bytes = out.size() * sizeof(float);
  if (device_ == Device::CUDA) {
    CUDA_CHECK(cudaMemcpyAsync(out.data(), data_, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  } else {
    std::memcpy(out.data(), data_, bytes);
  }
  return out;
}

void Tensor::copy_from(const Tensor& src, cudaStream_t stream) {
  if (src.rows_ != rows_ || src.cols_ != cols_)
    throw Error("tensor: copy_from a " + src.shape() + " tensor into a " + shape() + " tensor");
  if (empty()) return;
  float* dst = data();
  const size_t bytes = static_cast<size_t>(size()) * sizeof(float);
  if (device_ == Device::CPU && src.device_ == Device::CPU) {
    std::memmove(dst, src.data_, bytes);
    return;
  }
  const cudaMemcpyKind kind =
      device_ == Device::CUDA
          ? (src.device_ == Device::CUDA ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
          : cudaMemcpyDeviceToHost;
  CUDA_CHECK(cudaMemcpyAsync(dst, src.data_, bytes, kind, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

// ---------------------------------------------------------------------------------------------
// LabelTensor

LabelTensor::LabelTensor(Device device, const std::vector<int32_t>& host)
    : device_(device), size_(static_cast<int>(host.size())) {
  if (host.empty()) throw Error("labels: no labels given");
  const size_t bytes = host.size() * sizeof(int32_t);
  if (device == Device::CUDA) {
    CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), bytes));
    const cudaError_t err = cudaMemcpy(data_, host.data(), bytes, cudaMemcpyHostToDevice);
    if (err != cudaSuccess) {
      cudaFree(data_);
      CUDA_CHECK(err);
    }
  } else {
    data_ = new int32_t[host.size()];
    std::memcpy(data_, host.data(), bytes);
  }
  owning_ = true;
}

LabelTensor LabelTensor::view(Device device, const int32_t* data, int size) {
  if (data == nullptr || size < 1)
    throw Error("labels: a view needs a pointer and a size >= 1, got " + std::to_string(size));
  LabelTensor t;
  t.device_ = device;
  t.data_ = const_cast<int32_t*>(data);  // never written through: the class has no mutable access
  t.size_ = size;
  return t;
}

LabelTensor LabelTensor::first(int n) const {
  if (n < 1 || n > size_)
    throw Error("labels: first(" + std::to_string(n) + ") of " + std::to_string(size_) + " labels");
  return view(device_, data_, n);
}

LabelTensor::LabelTensor(LabelTensor&& other) noexcept { *this = std::move(other); }

LabelTensor& LabelTensor::operator=(LabelTensor&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    owning_ = std::exchange(other.owning_, false);
  }
  return *this;
}

LabelTensor::~LabelTensor() { release(); }

void LabelTensor::release() noexcept {
  if (owning_ && data_ != nullptr) {
    if (device_ == Device::CUDA)
      cudaFree(data_);  // a destructor must not throw
    else
      delete[] data_;
  }
  data_ = nullptr;
  owning_ = false;
}

}  // namespace engine
