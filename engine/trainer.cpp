#include "engine/trainer.h"

#include <algorithm>

namespace engine {

namespace {

std::unique_ptr<Optimizer> make_optimizer(Context& ctx, Module& net, const TrainerOptions& o) {
  if (o.optimizer == TrainerOptions::Optimizer::Adam)
    return std::make_unique<Adam>(ctx, net.parameters(), o.adam);
  return std::make_unique<Sgd>(ctx, net.parameters(), o.sgd);
}

// The network is prepared before the optimiser is built, which moves its parameters.
Module& prepared(Context& ctx, Module& net, const TrainerOptions& o) {
  if (o.max_batch < 1) throw Error("trainer: max_batch must be >= 1");
  if (o.classes < 2) throw Error("trainer: classes must be >= 2");
  const int in = net.in_features();
  if (in == 0) throw Error("trainer: the network's first module must fix the input width");
  net.set_accumulate_grads(false);
  const int out = net.prepare(ctx, o.max_batch, in);
  if (out != o.classes)
    throw Error("trainer: the network has " + std::to_string(out) +
                " outputs, but classes = " + std::to_string(o.classes));
  return net;
}

}  // namespace

Trainer::Trainer(Context& ctx, Module& net, const TrainerOptions& options)
    : ctx_(ctx),
      net_(prepared(ctx, net, options)),
      options_(options),
      optimizer_(make_optimizer(ctx, net, options)),
      train_metrics_(ctx),
      eval_metrics_(ctx),
      use_graph_(ctx.is_cuda() && options.cuda_graph) {
  loss_.prepare(ctx, options.max_batch, options.classes);
}

Trainer::~Trainer() = default;

void Trainer::enqueue(const Tensor& x, const LabelTensor& labels, const Fill& fill) {
  if (fill) fill(ctx_.stream(), optimizer_->device_step());
  const Tensor& logits = net_.forward(ctx_, x);
  const Tensor& dlogits = loss_.forward_backward(ctx_, logits, labels, train_metrics_);
  net_.backward(ctx_, dlogits);
  optimizer_->step(ctx_);
}

void Trainer::step(const Tensor& x, const LabelTensor& labels, const Fill& fill) {
  if (x.rows() < 1 || x.rows() > options_.max_batch)
    throw Error("trainer: a batch of " + std::to_string(x.rows()) + " rows, prepared for 1.." +
                std::to_string(options_.max_batch));
  if (labels.size() < x.rows())
    throw Error("trainer: " + std::to_string(labels.size()) + " labels for a batch of " +
                std::to_string(x.rows()));
  const bool full = x.rows() == options_.max_batch;
  if (!use_graph_ || !full) {
    enqueue(x, labels, fill);
  } else if (graph_ && x.data() == graph_x_ && labels.data() == graph_labels_) {
    graph_.launch(ctx_.stream());
  } else if (!warmed_up_) {
    enqueue(x, labels, fill);
    warmed_up_ = true;
  } else {
    try {
      graph_ = ctx_.capture([&] { enqueue(x, labels, fill); });
      graph_x_ = x.data();
      graph_labels_ = labels.data();
    } catch (const std::exception& e) {
      use_graph_ = false;
      graph_ = CudaGraph();
      graph_note_ = std::string("the training step could not be captured as a CUDA graph (") +
                    e.what() + "); running it launch by launch";
      enqueue(x, labels, fill);
      ++steps_;
      return;
    }
    graph_.launch(ctx_.stream());
  }
  ++steps_;
}

MetricTotals Trainer::take_metrics() {
  const MetricTotals t = train_metrics_.read(ctx_);
  train_metrics_.reset(ctx_);
  return t;
}

MetricTotals Trainer::evaluate(const Tensor& x, const LabelTensor& labels) {
  if (x.device() != ctx_.device() || labels.device() != ctx_.device())
    throw Error("trainer: evaluate needs x and labels on the context's device");
  if (labels.size() != x.rows())
    throw Error("trainer: evaluate got " + std::to_string(x.rows()) + " rows and " +
                std::to_string(labels.size()) + " labels");
  eval_metrics_.reset(ctx_);
  const int n = x.rows(), f = x.cols(), b = options_.max_batch;
  for (int start = 0; start < n; start += b) {
    const int size = std::min(b, n - start);
    const Tensor xb =
        Tensor::view(ctx_.device(), x.data() + static_cast<int64_t>(start) * f, size, f);
    const LabelTensor yb = LabelTensor::view(ctx_.device(), labels.data() + start, size);
    loss_.forward(ctx_, net_.forward(ctx_, xb), yb, eval_metrics_);
  }
  return eval_metrics_.read(ctx_);
}

}  // namespace engine
