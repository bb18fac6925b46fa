#include "engine/network/loss.h"

#include <algorithm>

#include "base/cuda_check.h"
#include "engine/network/ops.h"

namespace engine {

namespace {

void require_metrics_on(const Context& ctx, const Metrics& metrics, const char* who) {
  if (metrics.device() != ctx.device())
    throw Error(std::string(who) + ": metrics live on " + device_name(metrics.device()) +
                " but the context is " + device_name(ctx.device()));
}

// The loss kernels' scratch, on the GPU (the CPU needs none): made once, in prepare.
std::unique_ptr<ContextValue<LossScratch>> make_loss_scratch(Context& ctx) {
  return ctx.is_cuda() ? std::make_unique<ContextValue<LossScratch>>(ctx) : nullptr;
}

// A loss runs on the device it was prepared on: its buffers and scratch live there.
void require_prepared_on(const Context& ctx, const Tensor& buffer, const char* who) {
  if (buffer.device() != ctx.device())
    throw Error(std::string(who) + ": prepared on " + device_name(buffer.device()) +
                " but the context is " + device_name(ctx.device()));
}

}  // namespace

void Metrics::reset(Context& ctx) {
  if (ctx.device() != device()) throw Error("metrics: reset with a context on another device");
  counters_.zero(ctx);
}

MetricTotals Metrics::read(Context& ctx) const {
  if (ctx.device() != device()) throw Error("metrics: read with a context on another device");
  const MetricCounters c = counters_.read(ctx);
  if (c.bad_labels > 0)
    throw Error("loss: " + std::to_string(c.bad_labels) +
                " labels were outside [0, classes) (wrong dataset or class count?)");
  // What was seen, counted: a value a step uses again (the same batch every step) counts again.
  const std::string among = " among the " + std::to_string(c.seen) +
                            " examples seen since the metrics were last read (a value counts at "
                            "every step that uses it)";
  if (c.bad_inputs > 0)
    throw Error("loss: " + std::to_string(c.bad_inputs) + " input values were NaN or infinite," +
                among + "; the inputs must be finite");
  if (c.bad_targets > 0)
    throw Error("loss: " + std::to_string(c.bad_targets) + " target values were NaN or infinite," +
                among + "; the regression's targets must be finite");
  MetricTotals t;
  t.loss_sum = c.loss_sum;
  t.correct = static_cast<int64_t>(c.correct);
  t.seen = static_cast<int64_t>(c.seen);
  return t;
}

void SoftmaxCrossEntropy::prepare(Context& ctx, int max_batch, int classes) {
  if (max_batch < 1 || classes < 2)
    throw Error("softmax_cross_entropy: prepare needs max_batch >= 1 and classes >= 2, got " +
                std::to_string(max_batch) + " and " + std::to_string(classes));
  max_batch_ = max_batch;
  classes_ = classes;
  dlogits_buf_ = Tensor(ctx.device(), max_batch, classes);
  scratch_ = make_loss_scratch(ctx);
}

void SoftmaxCrossEntropy::run(Context& ctx, const Tensor& logits, const LabelTensor& labels,
                              bool with_grad, Metrics& metrics, int64_t* step_count) {
  if (max_batch_ == 0) throw Error("softmax_cross_entropy: used before prepare()");
  if (logits.cols() != classes_ || logits.rows() > max_batch_ || logits.rows() < 1)
    throw Error("softmax_cross_entropy: logits are " + logits.shape() + ", prepared for up to " +
                std::to_string(max_batch_) + "x" + std::to_string(classes_));
  require_metrics_on(ctx, metrics, "softmax_cross_entropy");
  require_prepared_on(ctx, dlogits_buf_, "softmax_cross_entropy");
  if (with_grad) dlogits_ = dlogits_buf_.first_rows(logits.rows());
  softmax_cross_entropy(ctx, logits, labels, with_grad ? &dlogits_ : nullptr, metrics.counters(),
                        scratch_ ? scratch_->get() : nullptr, step_count);
}

const Tensor& SoftmaxCrossEntropy::forward_backward(Context& ctx, const Tensor& logits,
                                                    const LabelTensor& labels, Metrics& metrics,
                                                    int64_t* step_count) {
  run(ctx, logits, labels, true, metrics, step_count);
  return dlogits_;
}

void SoftmaxCrossEntropy::forward(Context& ctx, const Tensor& logits, const LabelTensor& labels,
                                  Metrics& metrics) {
  run(ctx, logits, labels, false, metrics, nullptr);
}

void MeanSquaredError::prepare(Context& ctx, int max_batch, int outputs) {
  if (max_batch < 1 || outputs < 1)
    throw Error("mean_squared_error: prepare needs max_batch >= 1 and outputs >= 1, got " +
                std::to_string(max_batch) + " and " + std::to_string(outputs));
  max_batch_ = max_batch;
  outputs_ = outputs;
  dpredictions_buf_ = Tensor(ctx.device(), max_batch, outputs);
  scratch_ = make_loss_scratch(ctx);
}

void MeanSquaredError::run(Context& ctx, const Tensor& predictions, const Tensor& targets,
                           bool with_grad, Metrics& metrics, int64_t* step_count) {
  if (max_batch_ == 0) throw Error("mean_squared_error: used before prepare()");
  if (predictions.cols() != outputs_ || predictions.rows() > max_batch_ || predictions.rows() < 1)
    throw Error("mean_squared_error: predictions are " + predictions.shape() +
                ", prepared for up to " + std::to_string(max_batch_) + "x" +
                std::to_string(outputs_));
  require_metrics_on(ctx, metrics, "mean_squared_error");
  require_prepared_on(ctx, dpredictions_buf_, "mean_squared_error");
  if (with_grad) dpredictions_ = dpredictions_buf_.first_rows(predictions.rows());
  mean_squared_error(ctx, predictions, targets, with_grad ? &dpredictions_ : nullptr,
                     metrics.counters(), scratch_ ? scratch_->get() : nullptr, step_count);
}

const Tensor& MeanSquaredError::forward_backward(Context& ctx, const Tensor& predictions,
                                                 const Tensor& targets, Metrics& metrics,
                                                 int64_t* step_count) {
  run(ctx, predictions, targets, true, metrics, step_count);
  return dpredictions_;
}

void MeanSquaredError::forward(Context& ctx, const Tensor& predictions, const Tensor& targets,
                               Metrics& metrics) {
  run(ctx, predictions, targets, false, metrics, nullptr);
}

}  // namespace engine
