// The engine's optimiser kernels: SGD and Adam on the flat buffers, the device-side step counter,
// and the uniform initialiser's scaling (kernels_common.cuh says what the engine's kernels share).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "base/cuda_check.h"
#include "engine/runtime/backend.h"
#include "engine/runtime/kernels_common.cuh"
#include "engine/runtime/optim_update.cuh"

namespace engine::cuda {

namespace {

// The optimisers' arrays are the flat buffers of network/optim.h: n a multiple of 4 and 16-byte
// aligned, so a thread updates one float4 of every array (its four lanes unrolled, kept in
// registers).
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
    for (int j = 0; j < kLanes; ++j)
      sgd_update(wi.lane[j], gi.lane[j], vi.lane[j], v != nullptr, lr, momentum, weight_decay);
    store4(w, i, wi);
    if (v != nullptr) store4(v, i, vi);
  }
}

// w, g, m, v are n.
__global__ void adam_kernel(float* w, const float* g, float* m, float* v, int64_t n,
                            const int64_t* counted, LrSchedule schedule, float beta1, float beta2,
                            float eps, float weight_decay) {
  await_prior_kernels();
  const AdamStep step = adam_step_at(schedule, *counted, beta1, beta2);
  GRID_STRIDE_LOOP(i, n / kLanes) {
    Float4 wi = load4(w, i), mi = load4(m, i), vi = load4(v, i);
    const Float4 gi = load4(g, i);
#pragma unroll
    for (int j = 0; j < kLanes; ++j)
      adam_update(wi.lane[j], gi.lane[j], mi.lane[j], vi.lane[j], step, beta1, beta2, eps,
                  weight_decay);
    store4(w, i, wi);
    store4(m, i, mi);
    store4(v, i, vi);
  }
}

__global__ void advance_step_count_kernel(int64_t* step) {
  await_prior_kernels();
  *step += 1;
}

// w is n.
__global__ void scale_uniform_kernel(float* w, int64_t n, float bound) {
  await_prior_kernels();
  GRID_STRIDE_LOOP(i, n) { w[i] = bound * (2.0f * w[i] - 1.0f); }
}

}  // namespace

namespace {

// The float4 kernels' precondition, which network/optim.h's flat buffers meet.
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
  launch_kernel(advance_step_count_kernel, {dim3(1), dim3(1), 0, stream}, step);
}

void scale_uniform(float* w, int64_t n, float bound, cudaStream_t stream) {
  launch_kernel(scale_uniform_kernel, {dim3(blocks_for(n)), dim3(kThreads), 0, stream}, w, n,
                bound);
}

}  // namespace engine::cuda
