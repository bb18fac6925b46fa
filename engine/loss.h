// The classification loss as an object with its buffers, and the counters it feeds.
//
//   Metrics m(ctx);                        // counters in the context's memory
//   SoftmaxCrossEntropy loss;
//   loss.prepare(ctx, max_batch, classes); // allocates once
//   const Tensor& dlogits = loss.forward_backward(ctx, logits, labels, m);   // in the step
//                                          // labels: an engine::LabelTensor
//   MetricTotals t = m.read(ctx);          // once per epoch: the one wait
#pragma once

#include <cstdint>

#include "engine/backend.h"
#include "engine/context.h"
#include "engine/context_value.h"
#include "engine/tensor.h"

namespace engine {

struct MetricTotals {
  double loss_sum = 0.0;
  int64_t correct = 0;
  int64_t seen = 0;
  double mean_loss() const { return seen > 0 ? loss_sum / seen : 0.0; }
  double accuracy() const { return seen > 0 ? static_cast<double>(correct) / seen : 0.0; }
};

// Loss sum, correct predictions and example count, accumulated where the computation runs.
class Metrics {
 public:
  explicit Metrics(Context& ctx) : counters_(ctx) {}  // allocates; starts at zero

  void reset(Context& ctx);  // queued on the stream, no wait
  // Waits for the stream and returns the totals. Throws if a label outside [0, classes) was seen.
  MetricTotals read(Context& ctx) const;

  Device device() const { return counters_.device(); }
  MetricCounters* counters() { return counters_.get(); }  // for the loss: device or host memory

 private:
  ContextValue<MetricCounters> counters_;
};

class SoftmaxCrossEntropy {
 public:
  // Allocates dlogits (max_batch×classes). Call outside the step.
  void prepare(Context& ctx, int max_batch, int classes);

  // logits is B×classes with B ≤ max_batch; labels holds at least B labels in the context's
  // memory. Adds the batch's loss, correct count and size to `metrics`, and returns the gradient
  // of the batch's mean loss w.r.t. the logits (B×classes, a view valid until the next call).
  // One kernel on the GPU.
  const Tensor& forward_backward(Context& ctx, const Tensor& logits, const LabelTensor& labels,
                                 Metrics& metrics);
  // The same without the gradient (evaluation).
  void forward(Context& ctx, const Tensor& logits, const LabelTensor& labels, Metrics& metrics);

 private:
  void run(Context& ctx, const Tensor& logits, const LabelTensor& labels, bool with_grad,
           Metrics& metrics);

  int max_batch_ = 0, classes_ = 0;
  Tensor dlogits_buf_, dlogits_;  // the buffer, and a view of the current batch's rows
};

}  // namespace engine
