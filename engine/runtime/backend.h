// The two backends of the engine's non-GEMM work, internal to engine/. The same functions with the
// same raw-pointer arguments: engine::cuda queues kernels on `stream` (kernels_*.cu), engine::host
// runs plain loops (host_ops.cpp). network/ops.cpp checks shapes and devices, then calls one of
// them. Every matrix is row-major and contiguous. The shape comments are given once, on
// engine::cuda.
#pragma once

#include <cuda_runtime.h>  // __host__ __device__ (empty outside nvcc)

#include <cmath>
#include <cstdint>

namespace engine {

// Loss and accuracy counters that live with the data (device or host memory) and are read back
// once per epoch or per progress tick.
struct MetricCounters {
  double loss_sum;                // Σ per-example loss
  unsigned long long correct;     // examples whose first arg-max logit is the label (cross-entropy)
  unsigned long long seen;        // examples counted
  unsigned long long bad_labels;  // labels outside [0, classes): reported as an error on read
  unsigned long long bad_targets;  // targets that are NaN or infinite: reported as an error on read
  unsigned long long bad_inputs;   // input values that are NaN or infinite (counted on the CPU)
};

// The loss kernels' scratch in device memory, for their deterministic reduction of the metrics
// across blocks without float atomics: each block writes its partial sums to its own slot, then
// takes a ticket; the block that takes the last ticket adds the slots in a fixed order to the
// MetricCounters and sets the ticket back to 0, so that the next launch, or the next replay of a
// captured CUDA graph, starts clean. Allocated and zeroed once, outside the step (the losses'
// prepare); a loss launches at most kLossMaxBlocks blocks, so one size serves any batch. One
// launch at a time: two losses that may run concurrently (on other streams) need one each.
constexpr int kLossMaxBlocks = 1024;
struct LossPartial {
  double loss_sum;       // the block's rows' losses
  unsigned int correct;  // cross-entropy: the block's rows whose first arg-max is the label
  unsigned int bad;      // bad labels (cross-entropy) or non-finite targets (squared error)
};
struct LossScratch {
  unsigned int ticket;  // blocks finished in the current launch; 0 between launches
  LossPartial partials[kLossMaxBlocks];
};

// The learning rate of step s (0-based), computed where the optimiser runs, from the step counter
// in that memory, so that a captured CUDA graph needs no host write between replays.
//   constant: lr(s) = peak          cosine: lr(s) = peak · ½(1 + cos(π·s/total_steps))
struct LrSchedule {
  float peak = 0.0f;
  int64_t total_steps = 0;  // 0: constant
};

// The one formula, for both backends and the host's display, in double.
__host__ __device__ inline float lr_at(const LrSchedule& s, int64_t step) {
  if (s.total_steps <= 0) return s.peak;
  const double t = static_cast<double>(step) / static_cast<double>(s.total_steps);
  return static_cast<float>(s.peak * 0.5 * (1.0 + cos(3.14159265358979323846 * t)));
}

}  // namespace engine

namespace engine::cuda {

// dy is rows×cols, db is cols:  db[c] = beta·db[c] + Σ_r dy[r][c]  (beta = 0: db is only written)
void column_sums(const float* dy, float* db, int rows, int cols, float beta, cudaStream_t stream);

// x, y are n:  y = max(x, 0)
void relu_forward(const float* x, float* y, int64_t n, cudaStream_t stream);

// y (the ReLU's output), dy, dx are n:  dx = y > 0 ? dy : 0
void relu_backward(const float* y, const float* dy, float* dx, int64_t n, cudaStream_t stream);

// logits and dlogits are rows×classes; labels are rows; classes ≥ 1. One kernel:
//   dlogits = (softmax(logits) − onehot(labels)) · inv_batch; skipped when null
//   counters += Σ_r −log softmax(logits[r])[labels[r]], the rows whose first arg-max is the label,
//               rows; a label outside [0, classes) counts in bad_labels instead.
// One warp per row and many blocks, so the rows' loads overlap (a batch of logits is a few KB: the
// launch, not the bandwidth, is the floor); the metrics meet through `scratch` (see LossScratch),
// summed in an order fixed by rows alone, so they are reproducible, launch by launch or replayed
// in a graph. scratch is in device memory; its ticket must be 0 (as the kernel leaves it).
// step_count: null, or a counter in device memory that the kernel adds 1 to once the metrics are
// summed (a trainer counts its step there, with no kernel of its own).
void softmax_xent(const float* logits, const int32_t* labels, float* dlogits, int rows, int classes,
                  float inv_batch, MetricCounters* counters, LossScratch* scratch,
                  int64_t* step_count, cudaStream_t stream);

// predictions, targets and dpredictions are rows×cols; cols ≥ 1. One kernel:
//   dpredictions = (predictions − targets) · grad_scale; skipped when null
//   counters += Σ_r (Σ_c (predictions[r][c] − targets[r][c])²) / cols, rows, and the targets
//               that are NaN or infinite in bad_targets
// grad_scale = 2 / (rows·cols) makes dpredictions the gradient of the batch's mean loss. Laid out
// as softmax_xent, with the same scratch, the same reproducible sums and the same step_count.
void squared_error(const float* predictions, const float* targets, float* dpredictions, int rows,
                   int cols, float grad_scale, MetricCounters* counters, LossScratch* scratch,
                   int64_t* step_count, cudaStream_t stream);

// w, g, v are n (all parameters, flat: n % 4 == 0, 16-byte aligned arrays, or gemm_mlp::Error);
// v is null without momentum; *counted is the step counter, already advanced for this step
// (Optimizer::step, or the trainer's loss kernel), so this step's 0-based index is s =
// *counted − 1. PyTorch's SGD with lr = schedule(s):
//   g' = g + wd·w;   v = μ·v + g';   w −= lr·v        (without momentum: w −= lr·g')
void sgd_step(float* w, const float* g, float* v, int64_t n, const int64_t* counted,
              LrSchedule schedule, float momentum, float weight_decay, cudaStream_t stream);

// w, g, m, v are n (flat, as for sgd_step); t = *counted ≥ 1 (as for sgd_step), lr = schedule(t −
// 1), c1 = 1 − β1^t, c2 = 1 − β2^t:
//   g' = g + wd·w;  m = β1·m + (1−β1)·g';  v = β2·v + (1−β2)·g'²;  w −= lr·(m/c1) / (√(v/c2) + ε)
void adam_step(float* w, const float* g, float* m, float* v, int64_t n, const int64_t* counted,
               LrSchedule schedule, float beta1, float beta2, float eps, float weight_decay,
               cudaStream_t stream);

// *step += 1: counts the step, before its update reads the counter (Optimizer::step).
void advance_step(int64_t* step, cudaStream_t stream);

// w is n, uniform in (0, 1] as cuRAND makes it:  w = bound·(2w − 1), uniform in (−bound, bound]
void scale_uniform(float* w, int64_t n, float bound, cudaStream_t stream);

}  // namespace engine::cuda

namespace engine::host {

void column_sums(const float* dy, float* db, int rows, int cols, float beta);
void relu_forward(const float* x, float* y, int64_t n);
void relu_backward(const float* y, const float* dy, float* dx, int64_t n);
void softmax_xent(const float* logits, const int32_t* labels, float* dlogits, int rows, int classes,
                  float inv_batch, MetricCounters* counters);
void squared_error(const float* predictions, const float* targets, float* dpredictions, int rows,
                   int cols, float grad_scale, MetricCounters* counters);
void sgd_step(float* w, const float* g, float* v, int64_t n, const int64_t* counted,
              LrSchedule schedule, float momentum, float weight_decay);
void adam_step(float* w, const float* g, float* m, float* v, int64_t n, const int64_t* counted,
               LrSchedule schedule, float beta1, float beta2, float eps, float weight_decay);

}  // namespace engine::host
