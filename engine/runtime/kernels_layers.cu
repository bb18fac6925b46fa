// The engine's kernels for the layers: the bias gradient (column sums) and ReLU, forward and
// backward (kernels_common.cuh says what the engine's kernels share).
#include <cuda_runtime.h>

#include <cstdint>

#include "engine/runtime/backend.h"
#include "engine/runtime/kernels_common.cuh"

namespace engine::cuda {

namespace {

// dy is rows×cols, db is cols. A block owns kColTile columns; its kRowSlices thread rows each sum
// every kRowSlices-th row (a warp reads kColTile consecutive floats: coalesced), then one thread
// per column adds the slices in a fixed order, so the result is deterministic.
constexpr int kColTile = 32;
constexpr int kRowSlices = 32;  // 8 rows per thread at batch 256: a short dependent chain
static_assert(kColTile == kWarp, "one warp per row slice keeps the loads coalesced");
static_assert(kColTile * kRowSlices <= 1024, "a block has at most 1024 threads");

__global__ void column_sums_kernel(const float* dy, float* db, int rows, int cols, float beta) {
  await_prior_kernels();
  __shared__ float partial[kRowSlices][kColTile];
  const int c = blockIdx.x * kColTile + threadIdx.x;
  float sum = 0.0f;
  if (c < cols)
    for (int r = threadIdx.y; r < rows; r += kRowSlices)
      sum += dy[static_cast<int64_t>(r) * cols + c];
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    float total = 0.0f;
    for (int s = 0; s < kRowSlices; ++s) total += partial[s][threadIdx.x];
    db[c] = beta == 0.0f ? total : beta * db[c] + total;
  }
}

// x, y are n.
__global__ void relu_forward_kernel(const float* x, float* y, int64_t n) {
  await_prior_kernels();
  GRID_STRIDE_LOOP(i, n) { y[i] = fmaxf(x[i], 0.0f); }
}

// y, dy, dx are n.
__global__ void relu_backward_kernel(const float* y, const float* dy, float* dx, int64_t n) {
  await_prior_kernels();
  GRID_STRIDE_LOOP(i, n) { dx[i] = y[i] > 0.0f ? dy[i] : 0.0f; }
}

}  // namespace

void column_sums(const float* dy, float* db, int rows, int cols, float beta, cudaStream_t stream) {
  const dim3 block(kColTile, kRowSlices);
  const dim3 grid((cols + kColTile - 1) / kColTile);
  launch_kernel(column_sums_kernel, {dim3(grid), dim3(block), 0, stream}, dy, db, rows, cols, beta);
}

void relu_forward(const float* x, float* y, int64_t n, cudaStream_t stream) {
  launch_kernel(relu_forward_kernel, {dim3(blocks_for(n)), dim3(kThreads), 0, stream}, x, y, n);
}

void relu_backward(const float* y, const float* dy, float* dx, int64_t n, cudaStream_t stream) {
  launch_kernel(relu_backward_kernel, {dim3(blocks_for(n)), dim3(kThreads), 0, stream}, y, dy, dx,
                n);
}

}  // namespace engine::cuda
