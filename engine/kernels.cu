// The engine's own CUDA kernels: the elementwise and reduction parts of the layers that are not
// fused into a GEMM's epilogue, the loss and the optimisers. Every matrix product goes through the
// GEMM dispatch instead (Context::gemm). Each launcher states its shapes in backend.h; the kernels
// repeat them.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "engine/backend.h"
#include "kernels/cuda_check.h"

namespace engine::cuda {

namespace {

constexpr int kThreads = 256;     // threads per block for the elementwise kernels
constexpr int kMaxBlocks = 4096;  // grid-stride loops cover anything larger
constexpr int kWarp = 32;
static_assert(kThreads % kWarp == 0, "blocks must hold whole warps");

int blocks_for(int64_t n) {
  return static_cast<int>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

// Grid-stride loop over [0, n): the same kernel handles any n with a bounded grid.
#define GRID_STRIDE_LOOP(i, n)                                                           \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// dy is rows×cols, db is cols. A block owns kColTile columns; its kRowSlices thread rows each sum
// every kRowSlices-th row (a warp reads kColTile consecutive floats: coalesced), then one thread
// per column adds the slices in a fixed order, so the result is deterministic.
constexpr int kColTile = 32;
constexpr int kRowSlices = 32;  // 8 rows per thread at batch 256: a short dependent chain
static_assert(kColTile == kWarp, "one warp per row slice keeps the loads coalesced");
static_assert(kColTile * kRowSlices <= 1024, "a block has at most 1024 threads");

__global__ void column_sums_kernel(const float* dy, float* db, int rows, int cols, float beta) {
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
  GRID_STRIDE_LOOP(i, n) { y[i] = fmaxf(x[i], 0.0f); }
}

// y, dy, dx are n.
__global__ void relu_backward_kernel(const float* y, const float* dy, float* dx, int64_t n) {
  GRID_STRIDE_LOOP(i, n) { dx[i] = y[i] > 0.0f ? dy[i] : 0.0f; }
}

// logits, dlogits are rows×classes; labels are rows. One block of kLossThreads threads: warp w
// takes rows w, w + kLossWarps, …; its lanes stride over the classes and butterfly shuffles
// combine them. Each warp sums its rows' losses in row order, then the warps' sums are added in
// warp order, so the totals are reproducible. One block is enough for a batch of logits (256×10
// is 10 KB) and lets the metrics be summed without a second kernel or atomics.
// Stable softmax: subtract the row maximum before exp, so no exp overflows.
constexpr int kLossThreads = 1024;
constexpr int kLossWarps = kLossThreads / kWarp;
static_assert(kLossThreads % kWarp == 0 && kLossThreads <= 1024, "whole warps, one block");

__global__ void __launch_bounds__(kLossThreads)
    softmax_xent_kernel(const float* logits, const int32_t* labels, float* dlogits, int rows,
                        int classes, float inv_batch, MetricCounters* counters) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  double warp_loss = 0.0;  // kept by lane 0
  unsigned int warp_correct = 0, warp_bad = 0;
  for (int r = warp; r < rows; r += kLossWarps) {
    const float* z = logits + static_cast<int64_t>(r) * classes;
    // Maximum and its first index (ties go to the smaller index, as in torch.argmax).
    float best = -INFINITY;
    int best_j = classes;
    for (int j = lane; j < classes; j += kWarp)
      if (z[j] > best) best = z[j], best_j = j;
    for (int offset = kWarp / 2; offset > 0; offset /= 2) {
      const float other = __shfl_xor_sync(0xffffffffu, best, offset);
      const int other_j = __shfl_xor_sync(0xffffffffu, best_j, offset);
      if (other > best || (other == best && other_j < best_j)) best = other, best_j = other_j;
    }
    float sum = 0.0f;
    for (int j = lane; j < classes; j += kWarp) sum += expf(z[j] - best);
    for (int offset = kWarp / 2; offset > 0; offset /= 2)
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);

    const int label = labels[r];
    const bool valid = label >= 0 && label < classes;
    if (dlogits != nullptr) {
      float* d = dlogits + static_cast<int64_t>(r) * classes;
      for (int j = lane; j < classes; j += kWarp)
        d[j] = (expf(z[j] - best) / sum - (j == label ? 1.0f : 0.0f)) * inv_batch;
    }
    if (lane == 0) {
      if (valid) {
        warp_loss += logf(sum) - (z[label] - best);
        warp_correct += best_j == label ? 1u : 0u;
      } else {
        ++warp_bad;
      }
    }
  }
  __shared__ double loss[kLossWarps];
  __shared__ unsigned int correct[kLossWarps], bad[kLossWarps];
  if (lane == 0) loss[warp] = warp_loss, correct[warp] = warp_correct, bad[warp] = warp_bad;
  __syncthreads();
  if (threadIdx.x == 0) {
    double l = 0.0;
    unsigned long long c = 0, b = 0;
    for (int w = 0; w < kLossWarps; ++w) l += loss[w], c += correct[w], b += bad[w];
    counters->loss_sum += l;
    counters->correct += c;
    counters->seen += rows;
    counters->bad_labels += b;
  }
}

// predictions, targets, dpredictions are rows×cols. Laid out as softmax_xent_kernel: one block,
// warp w takes rows w, w + kLossWarps, …, its lanes stride over the columns and a butterfly adds
// the row's squared errors; rows are summed in row order per warp, then warps in warp order.
__global__ void __launch_bounds__(kLossThreads)
    squared_error_kernel(const float* predictions, const float* targets, float* dpredictions,
                         int rows, int cols, float grad_scale, MetricCounters* counters) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  double warp_loss = 0.0;  // kept by lane 0
  unsigned int lane_bad = 0;
  for (int r = warp; r < rows; r += kLossWarps) {
    const int64_t row = static_cast<int64_t>(r) * cols;
    float sum = 0.0f;
    for (int j = lane; j < cols; j += kWarp) {
      const float target = targets[row + j];
      lane_bad += isfinite(target) ? 0u : 1u;
      const float diff = predictions[row + j] - target;
      sum += diff * diff;
      if (dpredictions != nullptr) dpredictions[row + j] = diff * grad_scale;
    }
    for (int offset = kWarp / 2; offset > 0; offset /= 2)
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (lane == 0) warp_loss += static_cast<double>(sum) / cols;
  }
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    lane_bad += __shfl_xor_sync(0xffffffffu, lane_bad, offset);
  __shared__ double loss[kLossWarps];
  __shared__ unsigned int bad[kLossWarps];
  if (lane == 0) loss[warp] = warp_loss, bad[warp] = lane_bad;
  __syncthreads();
  if (threadIdx.x == 0) {
    double l = 0.0;
    unsigned long long b = 0;
    for (int w = 0; w < kLossWarps; ++w) l += loss[w], b += bad[w];
    counters->loss_sum += l;
    counters->seen += rows;
    counters->bad_targets += b;
  }
}

// The optimisers' arrays are the flat buffers of optim.h: n a multiple of 4 and 16-byte aligned,
// so a thread updates one float4 of every array (its four lanes unrolled, kept in registers).
constexpr int kLanes = 4;

union Float4 {
  float4 v;
  float lane[kLanes];
};

__device__ __forceinline__ Float4 load4(const float* p, int64_t i) {
  return {reinterpret_cast<const float4*>(p)[i]};
}
__device__ __forceinline__ void store4(float* p, int64_t i, const Float4& x) {
  reinterpret_cast<float4*>(p)[i] = x.v;
}

// w, g, v are n; every thread reads the step counter, so it is advanced by a later kernel.
__global__ void sgd_kernel(float* w, const float* g, float* v, int64_t n, const int64_t* step,
                           LrSchedule schedule, float momentum, float weight_decay) {
  const float lr = lr_at(schedule, *step);
  GRID_STRIDE_LOOP(i, n / kLanes) {
    Float4 wi = load4(w, i), vi = v != nullptr ? load4(v, i) : Float4{};
    const Float4 gi = load4(g, i);
#pragma unroll
    for (int j = 0; j < kLanes; ++j) {
      float update = gi.lane[j] + weight_decay * wi.lane[j];
      if (v != nullptr) {
        update = momentum * vi.lane[j] + update;
        vi.lane[j] = update;
      }
      wi.lane[j] -= lr * update;
    }
    store4(w, i, wi);
    if (v != nullptr) store4(v, i, vi);
  }
}

// w, g, m, v are n. The bias corrections in double, so that a large t loses nothing.
__global__ void adam_kernel(float* w, const float* g, float* m, float* v, int64_t n,
                            const int64_t* step, LrSchedule schedule, float beta1, float beta2,
                            float eps, float weight_decay) {
  const float lr = lr_at(schedule, *step);
  const double t = static_cast<double>(*step + 1);
  const auto c1 = static_cast<float>(1.0 - pow(static_cast<double>(beta1), t));
  const auto c2 = static_cast<float>(1.0 - pow(static_cast<double>(beta2), t));
  GRID_STRIDE_LOOP(i, n / kLanes) {
    Float4 wi = load4(w, i), mi = load4(m, i), vi = load4(v, i);
    const Float4 gi = load4(g, i);
#pragma unroll
    for (int j = 0; j < kLanes; ++j) {
      const float grad = gi.lane[j] + weight_decay * wi.lane[j];
      mi.lane[j] = beta1 * mi.lane[j] + (1.0f - beta1) * grad;
      vi.lane[j] = beta2 * vi.lane[j] + (1.0f - beta2) * grad * grad;
      wi.lane[j] -= lr * (mi.lane[j] / c1) / (sqrtf(vi.lane[j] / c2) + eps);
    }
    store4(w, i, wi);
    store4(m, i, mi);
    store4(v, i, vi);
  }
}

__global__ void advance_step_kernel(int64_t* step) { *step += 1; }

// w is n.
__global__ void scale_uniform_kernel(float* w, int64_t n, float bound) {
  GRID_STRIDE_LOOP(i, n) { w[i] = bound * (2.0f * w[i] - 1.0f); }
}

}  // namespace

void column_sums(const float* dy, float* db, int rows, int cols, float beta, cudaStream_t stream) {
  const dim3 block(kColTile, kRowSlices);
  const dim3 grid((cols + kColTile - 1) / kColTile);
  column_sums_kernel<<<grid, block, 0, stream>>>(dy, db, rows, cols, beta);
  CUDA_CHECK_LAUNCH();
}

void relu_forward(const float* x, float* y, int64_t n, cudaStream_t stream) {
  relu_forward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, y, n);
  CUDA_CHECK_LAUNCH();
}

void relu_backward(const float* y, const float* dy, float* dx, int64_t n, cudaStream_t stream) {
  relu_backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(y, dy, dx, n);
  CUDA_CHECK_LAUNCH();
}

void softmax_xent(const float* logits, const int32_t* labels, float* dlogits, int rows, int classes,
                  float inv_batch, MetricCounters* counters, cudaStream_t stream) {
  softmax_xent_kernel<<<1, kLossThreads, 0, stream>>>(logits, labels, dlogits, rows, classes,
                                                      inv_batch, counters);
  CUDA_CHECK_LAUNCH();
}

void squared_error(const float* predictions, const float* targets, float* dpredictions, int rows,
                   int cols, float grad_scale, MetricCounters* counters, cudaStream_t stream) {
  squared_error_kernel<<<1, kLossThreads, 0, stream>>>(predictions, targets, dpredictions, rows,
                                                       cols, grad_scale, counters);
  CUDA_CHECK_LAUNCH();
}

namespace {

// The float4 kernels' precondition, which optim.h's flat buffers meet.
void require_flat(int64_t n, std::initializer_list<const float*> arrays) {
  bool ok = n % kLanes == 0;
  for (const float* p : arrays) ok = ok && reinterpret_cast<uintptr_t>(p) % 16 == 0;
  if (!ok)
    throw gemm_mlp::Error("optimiser kernels need n % 4 == 0 and 16-byte aligned arrays, got n = " +
                          std::to_string(n));
}

}  // namespace

void sgd_step(float* w, const float* g, float* v, int64_t n, const int64_t* step,
              LrSchedule schedule, float momentum, float weight_decay, cudaStream_t stream) {
  require_flat(n, {w, g, v});
  sgd_kernel<<<blocks_for(n / kLanes), kThreads, 0, stream>>>(w, g, v, n, step, schedule, momentum,
                                                              weight_decay);
  CUDA_CHECK_LAUNCH();
}

void adam_step(float* w, const float* g, float* m, float* v, int64_t n, const int64_t* step,
               LrSchedule schedule, float beta1, float beta2, float eps, float weight_decay,
               cudaStream_t stream) {
  require_flat(n, {w, g, m, v});
  adam_kernel<<<blocks_for(n / kLanes), kThreads, 0, stream>>>(w, g, m, v, n, step, schedule, beta1,
                                                               beta2, eps, weight_decay);
  CUDA_CHECK_LAUNCH();
}

void advance_step(int64_t* step, cudaStream_t stream) {
  advance_step_kernel<<<1, 1, 0, stream>>>(step);
  CUDA_CHECK_LAUNCH();
}

void scale_uniform(float* w, int64_t n, float bound, cudaStream_t stream) {
  scale_uniform_kernel<<<blocks_for(n), kThreads, 0, stream>>>(w, n, bound);
  CUDA_CHECK_LAUNCH();
}

}  // namespace engine::cuda
