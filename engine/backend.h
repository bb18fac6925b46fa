// The two backends of the engine's non-GEMM work, internal to engine/. The same functions with the
// same raw-pointer arguments: engine::cuda queues kernels on `stream` (kernels.cu), engine::host
// runs plain loops (host_ops.cpp). ops.cpp checks shapes and devices, then calls one of them.
// Every matrix is row-major and contiguous. The shape comments are given once, on engine::cuda.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace engine {

// Loss and accuracy counters that live with the data (device or host memory) and are read back
// once per epoch or per progress tick.
struct MetricCounters {
  double loss_sum;                // Σ per-example loss
  unsigned long long correct;     // examples whose first arg-max logit is the label
  unsigned long long seen;        // examples counted
  unsigned long long bad_labels;  // labels outside [0, classes): reported as an error on read
};

}  // namespace engine

namespace engine::cuda {

// y is rows×cols, b is cols:  y[r][c] += b[c]
void add_bias(float* y, const float* b, int rows, int cols, cudaStream_t stream);

// dy is rows×cols, db is cols:  db[c] = beta·db[c] + Σ_r dy[r][c]  (beta = 0: db is only written)
void column_sums(const float* dy, float* db, int rows, int cols, float beta, cudaStream_t stream);

// x, y are n:  y = max(x, 0)
void relu_forward(const float* x, float* y, int64_t n, cudaStream_t stream);

// y (the ReLU's output), dy, dx are n:  dx = y > 0 ? dy : 0
void relu_backward(const float* y, const float* dy, float* dx, int64_t n, cudaStream_t stream);

// logits and dlogits are rows×classes; labels, row_loss and row_correct are rows.
//   row_loss[r]    = −log softmax(logits[r])[labels[r]]
//   row_correct[r] = 1 if the first arg-max of logits[r] is the label, else 0; −1 for a label
//                    outside [0, classes)
//   dlogits        = (softmax(logits) − onehot(labels)) · inv_batch; skipped when null
void softmax_xent(const float* logits, const int32_t* labels, float* dlogits, float* row_loss,
                  float* row_correct, int rows, int classes, float inv_batch, cudaStream_t stream);

// row_loss and row_correct are rows: adds their sums to *counters, always in the same order.
void accumulate_metrics(const float* row_loss, const float* row_correct, int rows,
                        MetricCounters* counters, cudaStream_t stream);

// w, g, v are n; v is null without momentum.  PyTorch's SGD:
//   g' = g + wd·w;   v = μ·v + g';   w −= lr·v        (without momentum: w −= lr·g')
void sgd_step(float* w, const float* g, float* v, int64_t n, float lr, float momentum,
              float weight_decay, cudaStream_t stream);

// w, g, m, v are n; c1 = 1 − β1^t and c2 = 1 − β2^t for step t ≥ 1 (computed on the host):
//   g' = g + wd·w;  m = β1·m + (1−β1)·g';  v = β2·v + (1−β2)·g'²;  w −= lr·(m/c1) / (√(v/c2) + ε)
void adam_step(float* w, const float* g, float* m, float* v, int64_t n, float lr, float beta1,
               float beta2, float eps, float weight_decay, float c1, float c2, cudaStream_t stream);

// w is n, uniform in (0, 1] as cuRAND makes it:  w = bound·(2w − 1), uniform in (−bound, bound]
void scale_uniform(float* w, int64_t n, float bound, cudaStream_t stream);

}  // namespace engine::cuda

namespace engine::host {

void add_bias(float* y, const float* b, int rows, int cols);
void column_sums(const float* dy, float* db, int rows, int cols, float beta);
void relu_forward(const float* x, float* y, int64_t n);
void relu_backward(const float* y, const float* dy, float* dx, int64_t n);
void softmax_xent(const float* logits, const int32_t* labels, float* dlogits, float* row_loss,
                  float* row_correct, int rows, int classes, float inv_batch);
void accumulate_metrics(const float* row_loss, const float* row_correct, int rows,
                        MetricCounters* counters);
void sgd_step(float* w, const float* g, float* v, int64_t n, float lr, float momentum,
              float weight_decay);
void adam_step(float* w, const float* g, float* m, float* v, int64_t n, float lr, float beta1,
               float beta2, float eps, float weight_decay, float c1, float c2);

}  // namespace engine::host
