#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/cuda_check.h"
#include "base/gather_rows.cuh"
#include "base/memory_limit.h"
#include "data/idx.h"
#include "data/loader.h"

namespace data {

using gemm_mlp::Device;

namespace {

// A value uniform in [0, bound). Rejecting the lowest 2^64 mod bound outputs leaves a range whose
// size is a multiple of bound, so every remainder is equally likely.
uint64_t uniform_below(std::mt19937_64& rng, uint64_t bound) {
  const uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const uint64_t r = rng();
    if (r >= threshold) return r % bound;
  }
}

// perm[0..n) = a permutation of 0..n-1 that depends only on (seed, epoch). std::seed_seq's
// mixing is specified by the standard, so the order is the same on every platform.
void build_permutation(uint64_t seed, int epoch, int32_t* perm, int n) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(epoch)};
  std::mt19937_64 rng(seq);
  for (int i = 0; i < n; ++i) perm[i] = i;
  // Fisher–Yates: position i takes a uniformly chosen element of perm[0..i].
  for (int i = n - 1; i > 0; --i) {
    const int j = static_cast<int>(uniform_below(rng, static_cast<uint64_t>(i) + 1));
    std::swap(perm[i], perm[j]);
  }
}

// Batch `batch` of the epoch into x (its rows × features) and y, a row per warp: blocks of
// kGatherThreads threads, enough of them for every row of a full batch (base/gather_rows.cuh).
constexpr int kGatherThreads = 256;
__global__ void gather_batch(const gemm_mlp::BatchSource s, int batch, float* __restrict__ x,
                             int32_t* __restrict__ y) {
  gemm_mlp::gather_rows(s, batch, 0, s.batch_size, x, y, blockIdx.x * kGatherThreads + threadIdx.x,
                        gridDim.x * kGatherThreads);
}

// The same for batch *step (mod the epoch's batches), read on the device.
__global__ void gather_batch_at(const gemm_mlp::BatchSource s, const int64_t* __restrict__ step,
                                float* __restrict__ x, int32_t* __restrict__ y) {
  gemm_mlp::gather_rows(s, *step, 0, s.batch_size, x, y, blockIdx.x * kGatherThreads + threadIdx.x,
                        gridDim.x * kGatherThreads);
}

// The blocks of a gather of up to `rows` rows: a warp a row.
dim3 gather_grid(int rows) {
  constexpr int kRowsPerBlock = kGatherThreads / 32;
  return dim3(static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock));
}

}  // namespace

struct BatchLoader::Impl {
  Device device = Device::CPU;
  int count = 0;
  int features = 0;
  int batch_size = 0;
  bool drop_last = false;
  uint64_t seed = 0;
  cudaStream_t stream = nullptr;
  bool shuffled = false;  // begin_epoch has run at least once

  // Device::CUDA
  float* d_images = nullptr;  // count × features
  int32_t* d_labels = nullptr;
  int32_t* d_perm = nullptr;
  float* d_x = nullptr;  // batch rows × features
  int32_t* d_y = nullptr;
  int32_t* pinned_perm = nullptr;     // source of each epoch's permutation upload
  cudaEvent_t upload_done = nullptr;  // after the latest permutation upload
  cudaEvent_t gather_done = nullptr;  // after the latest gather
  bool upload_pending = false;
  bool gather_pending = false;

  // Device::CPU
  std::vector<float> h_images;
  std::vector<int32_t> h_labels;
  std::vector<int32_t> h_perm;
  std::vector<float> h_x;
  std::vector<int32_t> h_y;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // Waits for the loader's own queued work before freeing what it reads (the caller's stream may
  // already be gone, so the events are what is waited on). Errors are ignored: a destructor must
  // not throw, and there is nothing left to do.
  ~Impl() {
    if (upload_pending) cudaEventSynchronize(upload_done);
    if (gather_pending) cudaEventSynchronize(gather_done);
    if (upload_done != nullptr) cudaEventDestroy(upload_done);
    if (gather_done != nullptr) cudaEventDestroy(gather_done);
    if (pinned_perm != nullptr) cudaFreeHost(pinned_perm);
    for (void* p : {static_cast<void*>(d_images), static_cast<void*>(d_labels),
                    static_cast<void*>(d_perm), static_cast<void*>(d_x), static_cast<void*>(d_y)})
      if (p != nullptr) cudaFree(p);
  }
};

BatchLoader::BatchLoader(const Dataset& ds, int batch_size, uint64_t seed, Device device,
                         bool drop_last, cudaStream_t stream) {
  if (batch_size <= 0)
    throw Error("BatchLoader: batch size must be positive, got " + std::to_string(batch_size));
  if (ds.count <= 0 || ds.features() <= 0)
    throw Error("BatchLoader: empty dataset (" + std::to_string(ds.count) + " samples of " +
                std::to_string(ds.features()) + " features)");
  const size_t n_values = static_cast<size_t>(ds.count) * ds.features();
  if (ds.images.size() != n_values || ds.labels.size() != static_cast<size_t>(ds.count))
    throw Error("BatchLoader: inconsistent dataset: " + std::to_string(ds.images.size()) +
                " image values and " + std::to_string(ds.labels.size()) + " labels for " +
                std::to_string(ds.count) + " samples of " + std::to_string(ds.features()) +
                " features");
  if (drop_last && batch_size > ds.count)
    throw Error("BatchLoader: batch size " + std::to_string(batch_size) + " exceeds the " +
                std::to_string(ds.count) + " samples, so drop_last would leave no batch");

  impl_ = std::make_unique<Impl>();
  Impl& m = *impl_;
  m.device = device;
  m.count = ds.count;
  m.features = ds.features();
  m.batch_size = batch_size;
  m.drop_last = drop_last;
  m.seed = seed;
  m.stream = stream;
  // No batch is larger than the dataset.
  const size_t rows = static_cast<size_t>(std::min(batch_size, ds.count));

  if (device == Device::CPU) {
    // Its own copy of the dataset, and the batch's buffers: checked before they are taken.
    using gemm_mlp::byte_product;
    const uint64_t bytes = gemm_mlp::byte_sum(
        {byte_product({n_values, sizeof(float)}),
         byte_product({uint64_t(ds.count), 2 * sizeof(int32_t)}),  // labels, permutation
         byte_product({rows, uint64_t(m.features) + 1, sizeof(float)})});
    gemm_mlp::check_host_allocation(bytes, "BatchLoader: its copy of the dataset (" +
                                               std::to_string(ds.count) + " samples of " +
                                               std::to_string(m.features) + " features)");
    m.h_images = ds.images;
    m.h_labels = ds.labels;
    m.h_perm.resize(ds.count);
    m.h_x.resize(rows * m.features);
    m.h_y.resize(rows);
    return;
  }
  // If any step throws, impl_'s destructor frees what was allocated so far.
  CUDA_CHECK(cudaMalloc(&m.d_images, n_values * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&m.d_labels, ds.labels.size() * sizeof(int32_t)));
  CUDA_CHECK(cudaMalloc(&m.d_perm, ds.labels.size() * sizeof(int32_t)));
  CUDA_CHECK(cudaMalloc(&m.d_x, rows * m.features * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&m.d_y, rows * sizeof(int32_t)));
  CUDA_CHECK(cudaMallocHost(&m.pinned_perm, ds.labels.size() * sizeof(int32_t)));
  CUDA_CHECK(cudaEventCreateWithFlags(&m.upload_done, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreateWithFlags(&m.gather_done, cudaEventDisableTiming));
  CUDA_CHECK(cudaMemcpyAsync(m.d_images, ds.images.data(), n_values * sizeof(float),
                             cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(m.d_labels, ds.labels.data(), ds.labels.size() * sizeof(int32_t),
                             cudaMemcpyHostToDevice, stream));
  // Once the constructor returns, the caller may free ds.
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

BatchLoader::~BatchLoader() = default;
BatchLoader::BatchLoader(BatchLoader&&) noexcept = default;
BatchLoader& BatchLoader::operator=(BatchLoader&&) noexcept = default;

void BatchLoader::begin_epoch(int epoch) {
  Impl& m = *impl_;
  if (m.device == Device::CPU) {
    build_permutation(m.seed, epoch, m.h_perm.data(), m.count);
  } else {
    // The previous upload may still be reading the pinned buffer.
    if (m.upload_pending) CUDA_CHECK(cudaEventSynchronize(m.upload_done));
    m.upload_pending = false;
    build_permutation(m.seed, epoch, m.pinned_perm, m.count);
    CUDA_CHECK(cudaMemcpyAsync(m.d_perm, m.pinned_perm, m.count * sizeof(int32_t),
                               cudaMemcpyHostToDevice, m.stream));
    CUDA_CHECK(cudaEventRecord(m.upload_done, m.stream));
    m.upload_pending = true;
  }
  m.shuffled = true;
}

int BatchLoader::num_batches() const {
  const Impl& m = *impl_;
  const int full = m.count / m.batch_size;
  return m.drop_last || m.count % m.batch_size == 0 ? full : full + 1;
}

int BatchLoader::dropped_per_epoch() const {
  return impl_->drop_last ? impl_->count % impl_->batch_size : 0;
}

BatchLoader::Batch BatchLoader::batch(int i) {
  Impl& m = *impl_;
  if (!m.shuffled) throw Error("BatchLoader: batch() called before begin_epoch()");
  if (i < 0 || i >= num_batches())
    throw Error("BatchLoader: batch index " + std::to_string(i) + " out of range 0.." +
                std::to_string(num_batches() - 1));
  const int first = i * m.batch_size;
  const int size = std::min(m.batch_size, m.count - first);

  if (m.device == Device::CPU) {
    for (int r = 0; r < size; ++r) {
      const size_t src = static_cast<size_t>(m.h_perm[first + r]);
      std::memcpy(&m.h_x[static_cast<size_t>(r) * m.features], &m.h_images[src * m.features],
                  m.features * sizeof(float));
      m.h_y[r] = m.h_labels[src];
    }
    return {m.h_x.data(), m.h_y.data(), size};
  }
  gather_batch<<<gather_grid(size), kGatherThreads, 0, m.stream>>>(source(), i, m.d_x, m.d_y);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaEventRecord(m.gather_done, m.stream));
  m.gather_pending = true;
  return {m.d_x, m.d_y, size};
}

BatchLoader::Batch BatchLoader::batch_at(const int64_t* step) {
  return batch_at(step, impl_->stream);
}

BatchLoader::Batch BatchLoader::batch_at(const int64_t* step, cudaStream_t stream) {
  Impl& m = *impl_;
  if (!m.shuffled) throw Error("BatchLoader: batch_at() called before begin_epoch()");
  if (step == nullptr) throw Error("BatchLoader: batch_at() of a null step counter");
  if (m.device == Device::CPU) return batch(static_cast<int>(*step % num_batches()));
  const int rows = buffer().size;
  gather_batch_at<<<gather_grid(rows), kGatherThreads, 0, stream>>>(source(), step, m.d_x, m.d_y);
  CUDA_CHECK_LAUNCH();
  return {m.d_x, m.d_y, rows};
}

BatchLoader::Batch BatchLoader::buffer() const {
  const Impl& m = *impl_;
  const int rows = std::min(m.batch_size, m.count);
  if (m.device == Device::CPU) return {m.h_x.data(), m.h_y.data(), rows};
  return {m.d_x, m.d_y, rows};
}

gemm_mlp::BatchSource BatchLoader::source() const {
  const Impl& m = *impl_;
  if (m.device != Device::CUDA)
    throw Error("BatchLoader: source() describes a loader's device memory; this one is on the CPU");
  gemm_mlp::BatchSource s;
  s.images = m.d_images;
  s.labels = m.d_labels;
  s.order = m.d_perm;
  s.count = m.count;
  s.features = m.features;
  s.batch_size = m.batch_size;
  s.batches = num_batches();
  return s;
}

const float* BatchLoader::all_images() const {
  return impl_->device == Device::CPU ? impl_->h_images.data() : impl_->d_images;
}
const int32_t* BatchLoader::all_labels() const {
  return impl_->device == Device::CPU ? impl_->h_labels.data() : impl_->d_labels;
}
int BatchLoader::count() const { return impl_->count; }
int BatchLoader::features() const { return impl_->features; }
int BatchLoader::batch_size() const { return impl_->batch_size; }
gemm_mlp::Device BatchLoader::device() const { return impl_->device; }
cudaStream_t BatchLoader::stream() const { return impl_->stream; }

}  // namespace data
