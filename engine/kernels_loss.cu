// The engine's loss kernels: softmax cross-entropy and mean squared error, each with its gradient
// and the metrics summed on the device in a fixed order (kernels_common.cuh says what the
// engine's kernels share).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "engine/backend.h"
#include "engine/kernels_common.cuh"

namespace engine::cuda {

namespace {

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

}  // namespace

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

}  // namespace engine::cuda
