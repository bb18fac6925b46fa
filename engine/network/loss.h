// The losses as objects with their buffers, and the counters they feed.
//
//   Metrics m(ctx);                        // counters in the context's memory
//   SoftmaxCrossEntropy loss;              // classification: labels, loss and accuracy
//   loss.prepare(ctx, max_batch, classes); // allocates once
//   const Tensor& dlogits = loss.forward_backward(ctx, logits, labels, m);   // in the step
//                                          // labels: an engine::LabelTensor
//   MetricTotals t = m.read(ctx);          // once per epoch: the one wait
//
// MeanSquaredError (regression) is used the same way, with float targets (a Tensor of the
// predictions' shape) in place of labels; it counts the loss only.
#pragma once

#include <cstdint>
#include <memory>

#include "engine/runtime/backend.h"
#include "engine/runtime/context.h"
#include "engine/runtime/context_value.h"
#include "engine/runtime/tensor.h"

namespace engine {

struct MetricTotals {
  double loss_sum = 0.0;  // Σ per-example loss
  int64_t correct = 0;    // cross-entropy only: 0 under mean squared error
  int64_t seen = 0;
  double mean_loss() const { return seen > 0 ? loss_sum / seen : 0.0; }
  // Cross-entropy only: accuracy does not apply to a regression, where it reads 0.
  double accuracy() const { return seen > 0 ? static_cast<double>(correct) / seen : 0.0; }
};

// Loss sum, correct predictions and example count, accumulated where the computation runs.
class Metrics {
 public:
  explicit Metrics(Context& ctx) : counters_(ctx) {}  // allocates; starts at zero

  void reset(Context& ctx);  // queued on the stream, no wait
  // Waits for the stream and returns the totals. Throws if a label outside [0, classes), or a
  // target or (counted by the Trainer on the CPU) an input that is NaN or infinite, was seen,
  // naming how many among the examples seen.
  MetricTotals read(Context& ctx) const;

  Device device() const { return counters_.device(); }
  MetricCounters* counters() { return counters_.get(); }  // for the loss: device or host memory

 private:
  ContextValue<MetricCounters> counters_;
};

class SoftmaxCrossEntropy {
 public:
  // Allocates dlogits (max_batch×classes) and, on the GPU, the kernel's LossScratch. Call outside
  // the step.
  void prepare(Context& ctx, int max_batch, int classes);

  // logits is B×classes with B ≤ max_batch; labels holds at least B labels in the context's
  // memory. Adds the batch's loss, correct count and size to `metrics`, and returns the gradient
  // of the batch's mean loss w.r.t. the logits (B×classes, a view valid until the next call).
  // One kernel on the GPU, which also adds 1 to *step_count unless it is null (ops.h).
  const Tensor& forward_backward(Context& ctx, const Tensor& logits, const LabelTensor& labels,
                                 Metrics& metrics, int64_t* step_count = nullptr);
  // The same without the gradient (evaluation).
  void forward(Context& ctx, const Tensor& logits, const LabelTensor& labels, Metrics& metrics);

 private:
  void run(Context& ctx, const Tensor& logits, const LabelTensor& labels, bool with_grad,
           Metrics& metrics, int64_t* step_count);

  int max_batch_ = 0, classes_ = 0;
  Tensor dlogits_buf_, dlogits_;  // the buffer, and a view of the current batch's rows
  std::unique_ptr<ContextValue<LossScratch>> scratch_;  // GPU only
};

// Mean squared error over all elements, as PyTorch's MSELoss: a batch's loss is
// Σ (prediction − target)² / (B·outputs). Each example adds its own mean squared error to the
// metrics, so mean_loss() is the MSE over all the examples seen; `correct` stays 0. A target that
// is NaN or infinite makes Metrics::read throw.
class MeanSquaredError {
 public:
  // Allocates dpredictions (max_batch×outputs), outputs ≥ 1, and, on the GPU, the kernel's
  // LossScratch. Call outside the step.
  void prepare(Context& ctx, int max_batch, int outputs);

  // predictions is B×outputs with B ≤ max_batch; targets has at least B rows of `outputs` floats
  // in the context's memory (the first B are used). Adds the batch's loss and size to `metrics`,
  // and returns the gradient of the batch's mean loss w.r.t. the predictions (B×outputs, a view
  // valid until the next call). One kernel on the GPU; step_count as for SoftmaxCrossEntropy.
  const Tensor& forward_backward(Context& ctx, const Tensor& predictions, const Tensor& targets,
                                 Metrics& metrics, int64_t* step_count = nullptr);
  // The same without the gradient (evaluation).
  void forward(Context& ctx, const Tensor& predictions, const Tensor& targets, Metrics& metrics);

 private:
  void run(Context& ctx, const Tensor& predictions, const Tensor& targets, bool with_grad,
           Metrics& metrics, int64_t* step_count);

  int max_batch_ = 0, outputs_ = 0;
  Tensor dpredictions_buf_, dpredictions_;  // the buffer, and a view of the current batch's rows
  std::unique_ptr<ContextValue<LossScratch>> scratch_;  // GPU only
};

}  // namespace engine
