// One row of each of the engine's losses, computed by the 32 lanes of one warp: what the loss
// kernels (kernels_loss.cu) run for every row.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "engine/runtime/backend.h"
#include "engine/runtime/kernels_common.cuh"

namespace engine::cuda {

// A lane keeps up to kLossCache of its row's logits in registers, so rows of up to
// kWarp·kLossCache = 256 classes are read once; wider rows are read again from the cache lines.
constexpr int kLossCache = 8;
static_assert(kLossCache >= 1, "the cached kernel covers rows of up to kWarp·kLossCache classes");

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

// Softmax cross-entropy of row r of logits (rows×classes) against its label, by lane `lane` of a
// warp: the row's gradient into dlogits (rows×classes, scaled by inv_batch) unless it is null,
// and lane 0 adds the row's loss to `loss`, 1 to `correct` when the first arg-max is the label and
// 1 to `bad` for a label outside [0, classes). kCached: classes ≤ kWarp·kLossCache, and each lane
// keeps its logits, then their exps, in registers. Stable softmax: the row maximum is subtracted
// before exp, so no exp overflows. The arg-max is the first maximum (ties go to the smaller index,
// as in torch.argmax).
template <bool kCached>
__device__ __forceinline__ void softmax_xent_row(const float* __restrict__ logits, int label,
                                                 float* __restrict__ dlogits, int64_t r,
                                                 int classes, float inv_batch, int lane,
                                                 double& loss, unsigned int& correct,
                                                 unsigned int& bad) {
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
      loss += logf(sum) - (z_label - best);
      correct += best_j == label ? 1u : 0u;
    }
  } else if (lane == 0) {
    ++bad;
  }
}

// The squared error of row r of predictions against targets (rows×cols), by lane `lane` of a warp:
// the row's gradient (the difference times grad_scale) into dpredictions unless it is null; lane 0
// adds the row's mean squared difference to `loss`, and each lane adds its targets that are NaN or
// infinite to `lane_bad`.
__device__ __forceinline__ void squared_error_row(const float* __restrict__ predictions,
                                                  const float* __restrict__ targets,
                                                  float* __restrict__ dpredictions, int64_t r,
                                                  int cols, float grad_scale, int lane,
                                                  double& loss, unsigned int& lane_bad) {
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
  if (lane == 0) loss += static_cast<double>(sum) / cols;
}

// Loss partials added in their order (the same sums every run).
__device__ __forceinline__ LossPartial add_in_order(const LossPartial* parts, int count) {
  LossPartial sum = parts[0];
  for (int i = 1; i < count; ++i) {
    sum.loss_sum += parts[i].loss_sum;
    sum.correct += parts[i].correct;
    sum.bad += parts[i].bad;
  }
  return sum;
}

// A block's warps' loss partials added in warp order: what the loss kernels keep of a block's
// rows.
template <int kWarps>
__device__ __forceinline__ LossPartial add_in_warp_order(const LossPartial (&warps)[kWarps]) {
  return add_in_order(warps, kWarps);
}

}  // namespace engine::cuda
