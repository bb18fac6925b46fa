// The CPU backend: the same operations as kernels_*.cu as plain loops (shapes in backend.h). They
// mirror the kernels' arithmetic, including the order of the softmax steps, so that both backends
// agree to rounding.
#include <cmath>
#include <limits>

#include "engine/runtime/backend.h"

namespace engine::host {

void column_sums(const float* dy, float* db, int rows, int cols, float beta) {
  for (int c = 0; c < cols; ++c) {
    float total = 0.0f;
    for (int r = 0; r < rows; ++r) total += dy[static_cast<int64_t>(r) * cols + c];
    db[c] = beta == 0.0f ? total : beta * db[c] + total;
  }
}

void relu_forward(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::fmax(x[i], 0.0f);
}

void relu_backward(const float* y, const float* dy, float* dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

void softmax_xent(const float* logits, const int32_t* labels, float* dlogits, int rows, int classes,
                  float inv_batch, MetricCounters* counters) {
  double loss = 0.0;
  for (int r = 0; r < rows; ++r) {
    const float* z = logits + static_cast<int64_t>(r) * classes;
    float best = -std::numeric_limits<float>::infinity();
    int best_j = classes;
    for (int j = 0; j < classes; ++j)
      if (z[j] > best) best = z[j], best_j = j;
    float sum = 0.0f;
    for (int j = 0; j < classes; ++j) sum += std::exp(z[j] - best);
    const int label = labels[r];
    const bool valid = label >= 0 && label < classes;
    if (dlogits != nullptr) {
      float* d = dlogits + static_cast<int64_t>(r) * classes;
      for (int j = 0; j < classes; ++j)
        d[j] = (std::exp(z[j] - best) / sum - (j == label ? 1.0f : 0.0f)) * inv_batch;
    }
    if (valid) {
      loss += std::log(sum) - (z[label] - best);
      counters->correct += best_j == label ? 1 : 0;
    } else {
      counters->bad_labels += 1;
    }
  }
  counters->loss_sum += loss;
  counters->seen += rows;
}

void squared_error(const float* predictions, const float* targets, float* dpredictions, int rows,
                   int cols, float grad_scale, MetricCounters* counters) {
  double loss = 0.0;
  for (int r = 0; r < rows; ++r) {
    const int64_t row = static_cast<int64_t>(r) * cols;
    float sum = 0.0f;
    for (int j = 0; j < cols; ++j) {
      const float target = targets[row + j];
      counters->bad_targets += std::isfinite(target) ? 0 : 1;
      const float diff = predictions[row + j] - target;
      sum += diff * diff;
      if (dpredictions != nullptr) dpredictions[row + j] = diff * grad_scale;
    }
    loss += static_cast<double>(sum) / cols;
  }
  counters->loss_sum += loss;
  counters->seen += rows;
}

void sgd_step(float* w, const float* g, float* v, int64_t n, const int64_t* counted,
              LrSchedule schedule, float momentum, float weight_decay) {
  const float lr = lr_at(schedule, *counted - 1);
  for (int64_t i = 0; i < n; ++i) {
    float update = g[i] + weight_decay * w[i];
    if (v != nullptr) {
      update = momentum * v[i] + update;
      v[i] = update;
    }
    w[i] -= lr * update;
  }
}

void adam_step(float* w, const float* g, float* m, float* v, int64_t n, const int64_t* counted,
               LrSchedule schedule, float beta1, float beta2, float eps, float weight_decay) {
  const float lr = lr_at(schedule, *counted - 1);
  const double t = static_cast<double>(*counted);
  const auto c1 = static_cast<float>(1.0 - std::pow(static_cast<double>(beta1), t));
  const auto c2 = static_cast<float>(1.0 - std::pow(static_cast<double>(beta2), t));
  for (int64_t i = 0; i < n; ++i) {
    const float grad = g[i] + weight_decay * w[i];
    m[i] = beta1 * m[i] + (1.0f - beta1) * grad;
    v[i] = beta2 * v[i] + (1.0f - beta2) * grad * grad;
    w[i] -= lr * (m[i] / c1) / (std::sqrt(v[i] / c2) + eps);
  }
}

}  // namespace engine::host
