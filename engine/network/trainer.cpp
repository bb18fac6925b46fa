#include "engine/network/trainer.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace engine {

namespace {

std::unique_ptr<Optimizer> make_optimizer(Context& ctx, Module& net, const TrainerOptions& o) {
  if (o.optimizer == TrainerOptions::Optimizer::Adam)
    return std::make_unique<Adam>(ctx, net.parameters(), o.adam);
  return std::make_unique<Sgd>(ctx, net.parameters(), o.sgd);
}

const char* loss_name(TrainerOptions::Loss loss) {
  return loss == TrainerOptions::Loss::CrossEntropy ? "cross-entropy" : "mean squared error";
}

// Prepares the network (before the optimiser is built, which moves its parameters) and returns
// its output width.
int prepare_network(Context& ctx, Module& net, const TrainerOptions& o) {
  if (o.max_batch < 1)
    throw Error("trainer: max_batch must be >= 1, got " + std::to_string(o.max_batch));
  if (o.loss != TrainerOptions::Loss::CrossEntropy &&
      o.loss != TrainerOptions::Loss::MeanSquaredError)
    throw Error("trainer: unknown loss " + std::to_string(static_cast<int>(o.loss)));
  const int in = net.in_features();
  if (in == 0) throw Error("trainer: the network's first module must fix the input width");
  net.set_accumulate_grads(false);
  const int out = net.prepare(ctx, o.max_batch, in);
  if (o.loss == TrainerOptions::Loss::CrossEntropy && out < 2)
    throw Error(
        "trainer: cross-entropy needs a network of >= 2 outputs (one per class), this "
        "one has " +
        std::to_string(out));
  return out;
}

}  // namespace

const void* Trainer::Targets::data() const {
  return labels != nullptr ? static_cast<const void*>(labels->data()) : values->data();
}

Trainer::Trainer(Context& ctx, Module& net, const TrainerOptions& options)
    : ctx_(ctx),
      net_(net),
      options_(options),
      outputs_(prepare_network(ctx, net, options)),
      optimizer_(make_optimizer(ctx, net, options)),
      train_metrics_(ctx),
      eval_metrics_(ctx),
      use_graph_(ctx.is_cuda() && options.cuda_graph) {
  if (options.loss == TrainerOptions::Loss::CrossEntropy)
    cross_entropy_.prepare(ctx, options.max_batch, outputs_);
  else
    mean_squared_error_.prepare(ctx, options.max_batch, outputs_);
}

Trainer::~Trainer() = default;

void Trainer::require_loss(TrainerOptions::Loss wanted, const char* call) const {
  if (options_.loss != wanted)
    throw Error(std::string("trainer: ") + call + " is for the " + loss_name(wanted) +
                " loss, but this trainer was built with " + loss_name(options_.loss) +
                (options_.loss == TrainerOptions::Loss::CrossEntropy
                     ? ", which takes labels (a LabelTensor)"
                     : ", which takes float targets (a Tensor of B x outputs)"));
}

const Tensor& Trainer::loss_gradient(const Tensor& output, const Targets& targets,
                                     int64_t* step_count) {
  if (targets.labels != nullptr)
    return cross_entropy_.forward_backward(ctx_, output, *targets.labels, train_metrics_,
                                           step_count);
  return mean_squared_error_.forward_backward(ctx_, output, *targets.values, train_metrics_,
                                              step_count);
}

void Trainer::enqueue(const Tensor& x, const Targets& targets, const Fill* first, const Fill* next,
                      bool branched) {
  if (first != nullptr) (*first)(ctx_.stream(), optimizer_->device_step());
  // On the CPU, inputs that are NaN or infinite are counted (a pass over x beside the GEMMs' many
  // over it), so that the metrics name them rather than a divergence; the GPU does not count them.
  if (!ctx_.is_cuda()) {
    unsigned long long bad = 0;
    const float* v = x.data();
    for (int64_t i = 0, n = static_cast<int64_t>(x.rows()) * x.cols(); i < n; ++i)
      bad += std::isfinite(v[i]) ? 0 : 1;
    train_metrics_.counters()->bad_inputs += bad;
  }
  std::optional<Context::Branches> branches;
  if (branched) branches.emplace(ctx_);  // gradients and updates on side streams
  const Tensor& output = net_.forward(ctx_, x);
  // The loss kernel counts the step, before the updates and the next gather read the counter.
  const Tensor& gradient = loss_gradient(output, targets, optimizer_->count_step_elsewhere());
  net_.backward(ctx_, gradient);
  // The next step's batch, once every read of x is queued: beside the updates, not before them.
  if (next != nullptr)
    ctx_.on(ctx_.fork_after_all(), [&] { (*next)(ctx_.stream(), optimizer_->device_step()); });
  optimizer_->apply(ctx_);
}

void Trainer::step(const Tensor& x, const LabelTensor& labels, const Fill& fill, Gather gather) {
  require_loss(TrainerOptions::Loss::CrossEntropy, "step(x, labels)");
  if (labels.size() < x.rows())
    throw Error("trainer: " + std::to_string(labels.size()) + " labels for a batch of " +
                std::to_string(x.rows()));
  Targets targets;
  targets.labels = &labels;
  run_step(x, targets, fill, gather);
}

void Trainer::step(const Tensor& x, const Tensor& targets, const Fill& fill, Gather gather) {
  require_loss(TrainerOptions::Loss::MeanSquaredError, "step(x, targets)");
  // Checked here, not in the loss: a throw during a capture would read as a failed capture.
  if (targets.device() != ctx_.device())
    throw Error(std::string("trainer: the targets live on ") + device_name(targets.device()) +
                " but the context is " + device_name(ctx_.device()));
  if (targets.rows() < x.rows() || targets.cols() != outputs_)
    throw Error("trainer: targets are " + targets.shape() + " for a batch of " +
                std::to_string(x.rows()) + " rows and a network of " + std::to_string(outputs_) +
                " outputs (they need >= " + std::to_string(x.rows()) + " rows of " +
                std::to_string(outputs_) + ")");
  Targets t;
  t.values = &targets;
  run_step(x, t, fill, gather);
}

void Trainer::run_step(const Tensor& x, const Targets& targets, const Fill& fill, Gather gather) {
  if (x.rows() < 1 || x.rows() > options_.max_batch)
    throw Error("trainer: a batch of " + std::to_string(x.rows()) + " rows, prepared for 1.." +
                std::to_string(options_.max_batch));
  const bool fill_next = gather == Gather::ThisAndNext;
  if (fill_next && !fill) throw Error("trainer: Gather::ThisAndNext without a fill");
  // The previous step gathered this one's batch already if it was told to, into these buffers.
  const bool prefilled = x.data() == prefilled_x_ && targets.data() == prefilled_targets_;
  const Fill* first = fill && !prefilled ? &fill : nullptr;
  const Fill* next = fill_next ? &fill : nullptr;
  prefilled_x_ = nullptr;
  prefilled_targets_ = nullptr;
  const bool full = x.rows() == options_.max_batch;
  // Branches only where a graph will replay them: launched one by one, a fork and a join cost the
  // host more than the overlap gains. The step before a capture takes them too, so that it sizes
  // the side streams' workspaces.
  const bool branched = options_.parallel_step;
  if (!use_graph_ || !full) {
    enqueue(x, targets, first, next, branched && options_.branch_launch_by_launch);
  } else if (!warmed_up_) {
    enqueue(x, targets, first, next, branched);
    warmed_up_ = true;
  } else {
    // The graph that gathers the next batch starts without a gather: a step that needs one
    // queues it first. The other gathers first whenever there is a fill (again, if this step's
    // batch is there already: the same rows).
    StepGraph& graph = graphs_[fill_next ? 1 : 0];
    const Fill* first_in_graph = fill_next ? nullptr : (fill ? &fill : nullptr);
    if (fill_next && first != nullptr) (*first)(ctx_.stream(), optimizer_->device_step());
    if (!graph.exec || x.data() != graph.x || targets.data() != graph.targets) {
      try {
        graph.exec = ctx_.capture([&] { enqueue(x, targets, first_in_graph, next, branched); });
        graph.x = x.data();
        graph.targets = targets.data();
      } catch (const std::exception& e) {
        use_graph_ = false;
        graphs_[0] = StepGraph();
        graphs_[1] = StepGraph();
        graph_note_ = std::string("the training step could not be captured as a CUDA graph (") +
                      e.what() + "); running it launch by launch";
        enqueue(x, targets, first_in_graph, next, false);
      }
    }
    if (graph.exec) graph.exec.launch(ctx_.stream());  // empty after a failed capture
  }
  if (fill_next) {
    prefilled_x_ = x.data();
    prefilled_targets_ = targets.data();
  }
  ++steps_;
}

namespace {

std::string steps_text(int64_t first, int64_t last) {
  if (first == last) return "step " + std::to_string(first);
  return "steps " + std::to_string(first) + " to " + std::to_string(last) +
         " (the steps since the metrics were last taken; take them more often to name one)";
}

}  // namespace

NonFiniteLoss::NonFiniteLoss(int64_t first, int64_t last, bool inputs_counted)
    : Error("trainer: the training loss became non-finite (NaN or infinite) in " +
            engine::steps_text(first, last) +
            "; the network diverged and its parameters are not to be trusted from there on "
            "(try a smaller learning rate" +
            (inputs_counted ? std::string(")")
                            : std::string(", or check the inputs: on the GPU, inputs that are "
                                          "NaN or infinite are not counted)"))),
      first_step(first),
      last_step(last) {}

std::string NonFiniteLoss::steps_text() const { return engine::steps_text(first_step, last_step); }

void Trainer::require_finite(const MetricTotals& t) const {
  if (!std::isfinite(t.loss_sum)) throw NonFiniteLoss(metrics_from_ + 1, steps_, !ctx_.is_cuda());
}

MetricTotals Trainer::take_metrics() {
  const MetricTotals t = train_metrics_.read(ctx_);
  train_metrics_.reset(ctx_);
  const int64_t from = metrics_from_;
  metrics_from_ = steps_;
  if (!std::isfinite(t.loss_sum)) throw NonFiniteLoss(from + 1, steps_, !ctx_.is_cuda());
  return t;
}

MetricTotals Trainer::peek_metrics() {
  const MetricTotals t = train_metrics_.read(ctx_);
  require_finite(t);
  return t;
}

std::vector<float> Trainer::predict(const Tensor& x) {
  if (x.device() != ctx_.device())
    throw Error(std::string("trainer: predict got x on ") + device_name(x.device()) +
                ", but the context is " + device_name(ctx_.device()) +
                " (Tensor::from_host(ctx.device(), ...) puts it there)");
  if (x.rows() < 1 || x.cols() != net_.in_features())
    throw Error("trainer: predict got x of " + x.shape() + " for a network of " +
                std::to_string(net_.in_features()) + " inputs (it needs >= 1 rows of " +
                std::to_string(net_.in_features()) + ")");
  const int n = x.rows(), f = x.cols(), b = options_.max_batch;
  std::vector<float> out(static_cast<size_t>(n) * outputs_);
  for (int start = 0; start < n; start += b) {
    const int size = std::min(b, n - start);
    const Tensor xb =
        Tensor::view(ctx_.device(), x.data() + static_cast<int64_t>(start) * f, size, f);
    const std::vector<float> y = net_.forward(ctx_, xb).download(ctx_.stream());
    std::copy(y.begin(), y.end(), out.begin() + static_cast<int64_t>(start) * outputs_);
  }
  return out;
}

MetricTotals Trainer::evaluate(const Tensor& x, const LabelTensor& labels) {
  require_loss(TrainerOptions::Loss::CrossEntropy, "evaluate(x, labels)");
  if (x.device() != ctx_.device() || labels.device() != ctx_.device())
    throw Error("trainer: evaluate needs x and labels on the context's device");
  Targets targets;
  targets.labels = &labels;
  return evaluate_in_batches(x, labels.size(), targets);
}

MetricTotals Trainer::evaluate(const Tensor& x, const Tensor& targets) {
  require_loss(TrainerOptions::Loss::MeanSquaredError, "evaluate(x, targets)");
  if (x.device() != ctx_.device() || targets.device() != ctx_.device())
    throw Error("trainer: evaluate needs x and targets on the context's device");
  if (targets.cols() != outputs_)
    throw Error("trainer: evaluate got targets of " + targets.shape() + " for a network of " +
                std::to_string(outputs_) + " outputs");
  Targets t;
  t.values = &targets;
  return evaluate_in_batches(x, targets.rows(), t);
}

MetricTotals Trainer::evaluate_in_batches(const Tensor& x, int target_count,
                                          const Targets& targets) {
  if (target_count != x.rows())
    throw Error("trainer: evaluate got " + std::to_string(x.rows()) + " rows and " +
                std::to_string(target_count) +
                (targets.labels != nullptr ? " labels" : " rows of targets"));
  eval_metrics_.reset(ctx_);
  const int n = x.rows(), f = x.cols(), b = options_.max_batch;
  for (int start = 0; start < n; start += b) {
    const int size = std::min(b, n - start);
    const Tensor xb =
        Tensor::view(ctx_.device(), x.data() + static_cast<int64_t>(start) * f, size, f);
    const Tensor& output = net_.forward(ctx_, xb);
    if (targets.labels != nullptr) {
      const LabelTensor yb = LabelTensor::view(ctx_.device(), targets.labels->data() + start, size);
      cross_entropy_.forward(ctx_, output, yb, eval_metrics_);
    } else {
      const Tensor yb = Tensor::view(
          ctx_.device(), targets.values->data() + static_cast<int64_t>(start) * outputs_, size,
          outputs_);
      mean_squared_error_.forward(ctx_, output, yb, eval_metrics_);
    }
  }
  return eval_metrics_.read(ctx_);
}

}  // namespace engine
