// The optimisers' update of one parameter, as a thread computes it: what the optimiser kernels
// (kernels_optim.cu) run for each lane of their float4.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "engine/runtime/backend.h"

namespace engine::cuda {

// SGD: w ← w − lr·u with u = g + weight_decay·w, or with a velocity (with_velocity) u = momentum·v
// + g + weight_decay·w, kept in v.
__device__ __forceinline__ void sgd_update(float& w, float g, float& v, bool with_velocity,
                                           float lr, float momentum, float weight_decay) {
  float update = g + weight_decay * w;
  if (with_velocity) {
    update = momentum * v + update;
    v = update;
  }
  w -= lr * update;
}

// What Adam's update of step `counted` (this step counted: t = *counted) shares across
// parameters: the rate and the two bias corrections, the corrections in double so that a large t
// loses nothing.
struct AdamStep {
  float lr, c1, c2;
};
__device__ __forceinline__ AdamStep adam_step_at(const LrSchedule& schedule, int64_t counted,
                                                 float beta1, float beta2) {
  const float lr = lr_at(schedule, counted - 1);
  const double t = static_cast<double>(counted);
  const auto c1 = static_cast<float>(1.0 - pow(static_cast<double>(beta1), t));
  const auto c2 = static_cast<float>(1.0 - pow(static_cast<double>(beta2), t));
  return {lr, c1, c2};
}

// Adam, its weight decay added to the gradient (L2, as the engine's Adam does): the moments m and
// v, then w.
__device__ __forceinline__ void adam_update(float& w, float g, float& m, float& v,
                                            const AdamStep& step, float beta1, float beta2,
                                            float eps, float weight_decay) {
  const float grad = g + weight_decay * w;
  m = beta1 * m + (1.0f - beta1) * grad;
  v = beta2 * v + (1.0f - beta2) * grad * grad;
  w -= step.lr * (m / step.c1) / (sqrtf(v / step.c2) + eps);
}

}  // namespace engine::cuda
