// The engine's own CUDA kernels: the elementwise and reduction parts of the layers that are not
// fused into a GEMM's epilogue, the loss and the optimisers. Every matrix product goes through the
// GEMM dispatch instead (Context::gemm). Each launcher states its shapes in backend.h; the kernels
// repeat them. All launch dependently (base/launch.cuh): each starts while the kernel before
// it on its stream finishes, and calls gemm::await_prior_kernels() before touching memory.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "engine/backend.h"
#include "base/cuda_check.h"
#include "base/launch.cuh"

namespace engine::cuda {

namespace {

using gemm::await_prior_kernels;
using gemm::launch_kernel;

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

// The loss kernels. A batch of logits is a few KB (256×10 is 10 KB), so the floor is one launch,
// and what costs is a chain of dependent loads. So: blocks of kLossThreads threads, one warp per
// row, as many blocks as the rows need (up to kLossMaxBlocks; past that the grid strides over the
// rows), and every row's loads in flight at once. A warp's lanes stride over the row's columns and
// butterfly shuffles combine them. The metrics meet without float atomics (backend.h's
// LossScratch): each warp's lane 0 sums its rows in row order, thread 0 adds the block's warps in
// warp order into the block's slot, and the last block to finish adds the slots in a fixed order.
// Every order depends on `rows` alone: the sums are reproducible, launch by launch or in a graph.
constexpr int kLossThreads = 256;
constexpr int kLossWarps = kLossThreads / kWarp;  // rows per block and pass
static_assert(kLossThreads % kWarp == 0 && kLossThreads <= 1024, "whole warps in one block");
// A lane keeps up to kLossCache of its row's logits in registers, so rows of up to
// kWarp·kLossCache = 256 classes are read once; wider rows are read again from the cache lines.
constexpr int kLossCache = 8;
static_assert(kLossCache >= 1, "the cached kernel covers rows of up to kWarp·kLossCache classes");

int loss_blocks(int rows) {
  return static_cast<int>(std::clamp<int64_t>(
      (static_cast<int64_t>(rows) + kLossWarps - 1) / kLossWarps, 1, kLossMaxBlocks));
}

// Calls f(k, j) for this lane's columns j = lane + k·kWarp < cols, k = 0, 1, …; with kCached the
// loop is unrolled to kLossCache visits (cols ≤ kWarp·kLossCache), so that k indexes registers.
template <bool kCached, class F>
__device__ __forceinline__ void for_lane_columns(int lane, int cols, F&& f) {
  if constexpr (kCached) {
#pragma unroll
    for (int k = 0; k < kLossCache; ++k)
      if (lane + k * kWarp < cols) f(k, lane + k * kWarp);
  } else {
    for (int j = lane, k = 0; j < cols; j += kWarp, ++k) f(k, j);
  }
}

// The loss kernels' end: warp w's lane 0 holds the sums of its rows. The block's warps are added
// in warp order into its slot; the block that takes the last ticket adds the slots (thread t takes
// slots t, t + kLossThreads, … in order, then butterflies and warp order combine the threads) into
// *counters, with `rows` into seen and the bad count into *bad_total, adds 1 to *step_count
// unless it is null, and sets the ticket to 0.
__device__ void finish_loss(double loss, unsigned int correct, unsigned int bad, int rows,
                            MetricCounters* counters, unsigned long long* bad_total,
                            LossScratch* scratch, int64_t* step_count) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  __shared__ LossPartial warps[kLossWarps];
  __shared__ bool last;
  if (lane == 0) warps[warp] = {loss, correct, bad};
  __syncthreads();
  if (threadIdx.x == 0) {
    LossPartial block = warps[0];
    for (int w = 1; w < kLossWarps; ++w) {
      block.loss_sum += warps[w].loss_sum;
      block.correct += warps[w].correct;
      block.bad += warps[w].bad;
    }
    scratch->partials[blockIdx.x] = block;
    __threadfence();  // the slot reaches every block before the ticket does
    last = atomicAdd(&scratch->ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  double l = 0.0;
  unsigned long long c = 0, b = 0;
  for (int i = threadIdx.x; i < static_cast<int>(gridDim.x); i += kLossThreads) {
    // From L2 (__ldcg): other SMs wrote the slots.
    l += __ldcg(&scratch->partials[i].loss_sum);
    c += __ldcg(&scratch->partials[i].correct);
    b += __ldcg(&scratch->partials[i].bad);
  }
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    l += __shfl_xor_sync(0xffffffffu, l, offset);
    c += __shfl_xor_sync(0xffffffffu, c, offset);
    b += __shfl_xor_sync(0xffffffffu, b, offset);
  }
  __shared__ double warp_l[kLossWarps];
  __shared__ unsigned long long warp_c[kLossWarps], warp_b[kLossWarps];
  if (lane == 0) warp_l[warp] = l, warp_c[warp] = c, warp_b[warp] = b;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kLossWarps; ++w) l += warp_l[w], c += warp_c[w], b += warp_b[w];
    counters->loss_sum += l;
    counters->correct += c;
    counters->seen += rows;
    *bad_total += b;
    if (step_count != nullptr) *step_count += 1;
    scratch->ticket = 0;  // every block has taken its ticket: the next launch starts clean
  }
}

// logits, dlogits are rows×classes; labels are rows; grid loss_blocks(rows) × kLossThreads.
// kCached: classes ≤ kWarp·kLossCache, and each lane keeps its logits, then their exps, in
// registers. Stable softmax: the row maximum is subtracted before exp, so no exp overflows. The
// arg-max is the first maximum (ties go to the smaller index, as in torch.argmax).
template <bool kCached>
__global__ void __launch_bounds__(kLossThreads)
    softmax_xent_kernel(const float* __restrict__ logits, const int32_t* __restrict__ labels,
                        float* __restrict__ dlogits, int rows, int classes, float inv_batch,
                        MetricCounters* counters, LossScratch* scratch, int64_t* step_count) {
  await_prior_kernels();
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  double warp_loss = 0.0;  // kept by lane 0
  unsigned int warp_correct = 0, warp_bad = 0;
  for (int64_t r = blockIdx.x * kLossWarps + warp; r < rows; r += gridDim.x * kLossWarps) {
    const int label = labels[r];
    const float* z = logits + r * classes;
    float cache[kLossCache];
    float best = -INFINITY, z_label = 0.0f;  // z_label: the label's logit, in the lane holding it
    int best_j = classes;
    for_lane_columns<kCached>(lane, classes, [&](int k, int j) {
      const float v = z[j];
      if constexpr (kCached) cache[k] = v;
      if (v > best) best = v, best_j = j;
      if (j == label) z_label = v;
    });
    for (int offset = kWarp / 2; offset > 0; offset /= 2) {
      const float other = __shfl_xor_sync(0xffffffffu, best, offset);
      const int other_j = __shfl_xor_sync(0xffffffffu, best_j, offset);
      if (other > best || (other == best && other_j < best_j)) best = other, best_j = other_j;
    }
    float sum = 0.0f;
    for_lane_columns<kCached>(lane, classes, [&](int k, int j) {
      if constexpr (kCached) {
        cache[k] = expf(cache[k] - best);
        sum += cache[k];
      } else {
        sum += expf(z[j] - best);
      }
    });
    for (int offset = kWarp / 2; offset > 0; offset /= 2)
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);

    if (dlogits != nullptr) {
      float* d = dlogits + r * classes;
      for_lane_columns<kCached>(lane, classes, [&](int k, int j) {
        float e;
        if constexpr (kCached)
          e = cache[k];
        else
          e = expf(z[j] - best);
        d[j] = (e / sum - (j == label ? 1.0f : 0.0f)) * inv_batch;
      });
    }
    if (label >= 0 && label < classes) {  // the same label in every lane
      z_label = __shfl_sync(0xffffffffu, z_label, label % kWarp);
      if (lane == 0) {
        warp_loss += logf(sum) - (z_label - best);
        warp_correct += best_j == label ? 1u : 0u;
      }
    } else if (lane == 0) {
      ++warp_bad;
    }
  }
  finish_loss(warp_loss, warp_correct, warp_bad, rows, counters, &counters->bad_labels, scratch,
              step_count);
}

// predictions, targets, dpredictions are rows×cols; grid loss_blocks(rows) × kLossThreads. Laid
// out as softmax_xent_kernel; each element is read once, so nothing is cached.
__global__ void __launch_bounds__(kLossThreads)
    squared_error_kernel(const float* __restrict__ predictions, const float* __restrict__ targets,
                         float* __restrict__ dpredictions, int rows, int cols, float grad_scale,
                         MetricCounters* counters, LossScratch* scratch, int64_t* step_count) {
  await_prior_kernels();
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  double warp_loss = 0.0;  // kept by lane 0
  unsigned int lane_bad = 0;
  for (int64_t r = blockIdx.x * kLossWarps + warp; r < rows; r += gridDim.x * kLossWarps) {
    const int64_t row = r * cols;
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
  finish_loss(warp_loss, 0u, lane_bad, rows, counters, &counters->bad_targets, scratch, step_count);
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

// w, g, v are n; *counted already counts this step (advanced by an earlier kernel), so every
// thread reads the same value.
__global__ void sgd_kernel(float* w, const float* g, float* v, int64_t n, const int64_t* counted,
                           LrSchedule schedule, float momentum, float weight_decay) {
  await_prior_kernels();
  const float lr = lr_at(schedule, *counted - 1);
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
                            const int64_t* counted, LrSchedule schedule, float beta1, float beta2,
                            float eps, float weight_decay) {
  await_prior_kernels();
  const float lr = lr_at(schedule, *counted - 1);
  const double t = static_cast<double>(*counted);
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

__global__ void advance_step_kernel(int64_t* step) {
  await_prior_kernels();
  *step += 1;
}

// w is n.
__global__ void scale_uniform_kernel(float* w, int64_t n, float bound) {
  await_prior_kernels();
  GRID_STRIDE_LOOP(i, n) { w[i] = bound * (2.0f * w[i] - 1.0f); }
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

void softmax_xent(const float* logits, const int32_t* labels, float* dlogits, int rows, int classes,
                  float inv_batch, MetricCounters* counters, LossScratch* scratch,
                  int64_t* step_count, cudaStream_t stream) {
  const int blocks = loss_blocks(rows);
  const auto kernel =
      classes <= kWarp * kLossCache ? softmax_xent_kernel<true> : softmax_xent_kernel<false>;
  launch_kernel(kernel, {dim3(blocks), dim3(kLossThreads), 0, stream}, logits, labels, dlogits,
                rows, classes, inv_batch, counters, scratch, step_count);
}

void squared_error(const float* predictions, const float* targets, float* dpredictions, int rows,
                   int cols, float grad_scale, MetricCounters* counters, LossScratch* scratch,
                   int64_t* step_count, cudaStream_t stream) {
  launch_kernel(squared_error_kernel, {dim3(loss_blocks(rows)), dim3(kLossThreads), 0, stream},
                predictions, targets, dpredictions, rows, cols, grad_scale, counters, scratch,
                step_count);
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

void sgd_step(float* w, const float* g, float* v, int64_t n, const int64_t* counted,
              LrSchedule schedule, float momentum, float weight_decay, cudaStream_t stream) {
  require_flat(n, {w, g, v});
  launch_kernel(sgd_kernel, {dim3(blocks_for(n / kLanes)), dim3(kThreads), 0, stream}, w, g, v, n,
                counted, schedule, momentum, weight_decay);
}

void adam_step(float* w, const float* g, float* m, float* v, int64_t n, const int64_t* counted,
               LrSchedule schedule, float beta1, float beta2, float eps, float weight_decay,
               cudaStream_t stream) {
  require_flat(n, {w, g, m, v});
  launch_kernel(adam_kernel, {dim3(blocks_for(n / kLanes)), dim3(kThreads), 0, stream}, w, g, m, v,
                n, counted, schedule, beta1, beta2, eps, weight_decay);
}

void advance_step(int64_t* step, cudaStream_t stream) {
  launch_kernel(advance_step_kernel, {dim3(1), dim3(1), 0, stream}, step);
}

void scale_uniform(float* w, int64_t n, float bound, cudaStream_t stream) {
  launch_kernel(scale_uniform_kernel, {dim3(blocks_for(n)), dim3(kThreads), 0, stream}, w, n,
                bound);
}

}  // namespace engine::cuda
