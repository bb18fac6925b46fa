// Shuffled mini-batches over a Dataset whose images and labels are uploaded once.
//
// Per epoch: begin_epoch(e) builds the permutation for (seed, e) on the host and uploads it with
// one asynchronous copy; batch(i) gathers rows perm[i·B ..] into one preallocated batch buffer
// with a kernel on the loader's stream. Neither allocates, and batch() never synchronises with
// the host, so a training step that calls it stays free of both.
//
// The order depends only on (seed, epoch) and is the same on every platform: std::mt19937_64 is
// specified exactly, and the seeding and Fisher–Yates shuffle are written out here (the standard
// distributions and std::shuffle are implementation-defined). Device and host loaders with the
// same seed give the same batches.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "base/batch_source.h"
#include "base/cuda_check.h"
#include "data/mnist.h"

namespace data {

class BatchLoader {
 public:
  // One batch: x is size × features floats, y is size labels, row-major. They point into the
  // loader's one batch buffer, which the next batch() overwrites (in stream order on the device).
  // Only the last batch of an epoch can be smaller than the batch size; it is never padded.
  struct Batch {
    const float* x;
    const int32_t* y;
    int size;
  };

  // `device` is where the data, the batch buffers and the returned pointers live; Device::CPU
  // needs no GPU and makes no CUDA call (the CPU backend). Copies ds (to the GPU with
  // Device::CUDA; the host copy is then not needed any more) and allocates everything the loader
  // will use. With drop_last, the samples left over after the last full batch are skipped each
  // epoch (a different set each epoch). Throws gemm_mlp::Error for batch_size ≤ 0, an empty or
  // inconsistent dataset, batch_size > count with drop_last, or a CUDA failure.
  BatchLoader(const Dataset& ds, int batch_size, uint64_t seed, gemm_mlp::Device device,
              bool drop_last = false, cudaStream_t stream = nullptr);
  ~BatchLoader();
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;
  BatchLoader(BatchLoader&&) noexcept;
  BatchLoader& operator=(BatchLoader&&) noexcept;

  // Shuffles for `epoch`. Must be called before the first batch(). On the device it waits only
  // for the previous epoch's permutation upload (normally finished long before), so that upload
  // still reads an intact host buffer.
  void begin_epoch(int epoch);

  int num_batches() const;
  // Gathers batch i (0 ≤ i < num_batches()) of the current epoch.
  Batch batch(int i);
  // Gathers batch (*step mod num_batches()) of the current epoch, reading *step where the data
  // lives (device memory with Device::CUDA): so a CUDA graph that captured this call gathers the
  // next batch at each replay. step counts the steps taken since the first epoch, each epoch
  // having num_batches() of them. Returns the batch buffer, sized for a full batch: the last batch
  // of an epoch fills only its first rows. Queued on the loader's stream, or on `stream`, which
  // must already follow the loader's stream's work (begin_epoch's upload), as a stream forked from
  // it does (engine::Trainer::Fill). Neither overload waits.
  Batch batch_at(const int64_t* step);
  Batch batch_at(const int64_t* step, cudaStream_t stream);
  // The batch buffer that batch() and batch_at() fill, sized for a full batch.
  Batch buffer() const;

  // Samples skipped per epoch: count % batch_size with drop_last, else 0.
  int dropped_per_epoch() const;

  // The whole set in its original order (count × features, count), for evaluation.
  const float* all_images() const;
  const int32_t* all_labels() const;
  int count() const;
  int features() const;
  int batch_size() const;
  gemm_mlp::Device device() const;
  cudaStream_t stream() const;

 private:
  // What batch() and batch_at() read on the device: the data set, the current epoch's order (as
  // begin_epoch() uploaded it, in stream order) and the batch size. Device::CUDA only; throws
  // otherwise.
  gemm_mlp::BatchSource source() const;

  // Owns every buffer; behind a pointer so that moves are cheap and a moved-from loader holds
  // nothing (it may only be destroyed or assigned to).
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace data
