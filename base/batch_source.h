// gemm_mlp::BatchSource: a data set in device memory and an epoch's order of it, which is what a
// gather of one batch reads: the data loader's kernels (data/loader.cu) gather through
// base/gather_rows.cuh from one of these.
//
// Batch b of the epoch (0 ≤ b < batches) is rows order[b·batch_size ..], of which there are
// min(batch_size, count − b·batch_size); a gather for training step s takes batch s mod batches.
#pragma once

#include <cuda_runtime.h>  // __host__ __device__ (empty outside nvcc)

#include <cstdint>

namespace gemm_mlp {

struct BatchSource {
  const float* images = nullptr;    // count × features, row-major
  const int32_t* labels = nullptr;  // count
  const int32_t* order = nullptr;   // count: the epoch's permutation of 0 .. count − 1
  int count = 0, features = 0;
  int batch_size = 0;  // rows of a full batch
  int batches = 0;     // batches an epoch: all of them, or the full ones where the rest is dropped
};

// Rows of batch `batch` of an epoch (mod its batches): the first, in the source's order, and how
// many (the epoch's last batch may have fewer than batch_size).
struct BatchRows {
  int first, size;
};
__host__ __device__ inline BatchRows batch_rows(const BatchSource& s, int64_t batch) {
  const int first = static_cast<int>(batch % s.batches) * s.batch_size;
  const int left = s.count - first;
  return {first, left < s.batch_size ? left : s.batch_size};
}

}  // namespace gemm_mlp
