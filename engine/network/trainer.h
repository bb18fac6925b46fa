// Trainer: the one owner of a network's training step — the network, its loss (softmax
// cross-entropy for a classifier, mean squared error for a regression), the optimiser, the metrics
// and, on CUDA, the captured graph of the whole step.
//
//   engine::Context ctx(seed);                        // the GPU if there is one, else the CPU
//   models::MLP net(ctx, 784, {1024, 1024}, 10);
//   engine::TrainerOptions o;
//   o.max_batch = 256, o.sgd.lr = 0.1f;               // the loss: cross-entropy by default
//   engine::Trainer trainer(ctx, net, o);              // prepares everything, once
//   for (...) trainer.step(x, labels);                 // x: B×784, labels: B (B ≤ 256)
//   engine::MetricTotals t = trainer.take_metrics();   // the one wait
//   std::vector<float> y = trainer.predict(x_test);    // the outputs, the caller's to keep
//
// Divergence: take_metrics() and peek_metrics() throw engine::NonFiniteLoss, naming the steps,
// when the training loss of the steps they cover is NaN or infinite (the rate too high; on the
// GPU, also inputs that are NaN or infinite, which on the CPU step() counts and the metrics name
// instead, as they name non-finite targets). The loss is accumulated on the device and read only
// there, so the steps named are those since the metrics were last taken (one step when they are
// taken after every step).
//
// A regression sets o.loss = TrainerOptions::Loss::MeanSquaredError and passes float targets,
// a Tensor of B×outputs, where a classifier passes labels: trainer.step(x, targets). Its metrics
// are the mean loss; accuracy does not apply (it reads 0). The output width is the network's
// (what its prepare() returns), so the targets' width and the class count come from it.
//
// A step is: the optional fill (a data loader's gather) → forward → loss, its gradient, the
// metrics and the step counter + 1 (one kernel) → backward, which overwrites the gradients (no
// zeroing pass) → the optimiser's updates, and with Gather::ThisAndNext the next step's fill
// beside them. On CUDA, with options.parallel_step, the independent parts of a graph's step run
// on side streams (Context::Branches): each layer's weight and bias gradients beside its input
// gradient, each layer's update as soon as its gradients are done and every input gradient that
// reads its weights is queued, and the next fill once every read of x is queued. So the chain of
// dependent kernels of a step that gathered ahead starts at the forward pass and ends at the
// first layer's update. A step launched one by one (without
// the graph, or a partial batch) runs on one stream: there each fork and join costs the host
// more than the overlap gains (unless options.branch_launch_by_launch). The arithmetic is the
// same either way, bit for bit.
//
// CUDA graph: on CUDA, with options.cuda_graph, the first full-size step runs launch by launch
// (it also sizes the GEMM workspaces and loads every kernel), the second is captured, and every
// later full-size step replays the graph with one launch. What changes between steps is read on
// the device: the step counter (learning rate, Adam's bias correction, and the batch a `fill`
// gathers). So x, the labels (or targets) and fill must be the same buffers and function at every
// full-size step; if x's or the labels' pointers change, the step is captured again. Steps with
// and without Gather::ThisAndNext replay two graphs, each captured at its first full-size step
// after the first. A smaller step (an epoch's last, partial batch) runs launch by launch. If the
// capture fails, the trainer says why in graph_note() and runs every later step launch by launch.
// Both ways give the same bits.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/network/loss.h"
#include "engine/network/module.h"
#include "engine/network/optim.h"
#include "engine/runtime/context.h"
#include "engine/runtime/tensor.h"

namespace engine {

struct TrainerOptions {
  int max_batch = 0;  // the largest batch step() gets (required)
  // CrossEntropy: softmax cross-entropy on labels (a network of ≥ 2 outputs, the class scores).
  // MeanSquaredError: on float targets of the network's output width (≥ 1).
  enum class Loss { CrossEntropy, MeanSquaredError } loss = Loss::CrossEntropy;
  enum class Optimizer { Sgd, Adam } optimizer = Optimizer::Sgd;
  SgdOptions sgd;             // used with Optimizer::Sgd
  AdamOptions adam;           // used with Optimizer::Adam
  bool cuda_graph = true;     // CUDA only: replay full-size steps as one graph
  bool parallel_step = true;  // CUDA graph only: independent work of a step on side streams
  // With parallel_step, steps launched one by one branch too: slower on the host, but the kernels
  // run in the graph's order (scripts/check/critical_path.py profiles them so).
  bool branch_launch_by_launch = false;
};

// The training loss became NaN or infinite: thrown by Trainer::take_metrics and peek_metrics.
// Steps are counted from 1, across a resumed run (Trainer::steps()). inputs_counted: NaN or
// infinite inputs would have been named instead (the CPU counts them; the message then blames
// divergence alone).
class NonFiniteLoss : public Error {
 public:
  NonFiniteLoss(int64_t first_step, int64_t last_step, bool inputs_counted = false);
  int64_t first_step, last_step;   // the steps whose loss was read: it went bad in one of them
  std::string steps_text() const;  // "step 7", or "steps 1 to 234"
};

class Trainer {
 public:
  // Writes the input of step *device_step (0-based) into the x and labels (or targets) given to
  // step(), queued on `stream`. device_step is the step counter, in the context's memory: read it
  // there (not on the host), so that a captured step gathers a new batch at every replay. Queued
  // before the step's forward pass, where *device_step is this step's index; or, with
  // Gather::ThisAndNext, also at the end of the step, where the counter already counts the step
  // and so names the next one.
  using Fill = std::function<void(cudaStream_t stream, const int64_t* device_step)>;
  // ThisAndNext: the step also gathers the next step's batch (its fill called again once every
  // read of x is queued, beside the updates), so that the next step, given the same x and labels
  // (or targets), starts without a gather, off its chain of dependent kernels. Use it only when
  // the next step calls step() with the same fill, and while what fill gathers for it stays valid
  // (not across a new epoch's order: the epoch's last step takes ThisStep).
  enum class Gather { ThisStep, ThisAndNext };

  // Prepares net for max_batch, sets it to overwrite its gradients, builds the optimiser (which
  // moves the parameters into one flat buffer) and the loss for the network's output width.
  // Throws gemm_mlp::Error on bad options.
  Trainer(Context& ctx, Module& net, const TrainerOptions& options);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // One optimisation step on x (B×features, 1 ≤ B ≤ max_batch), in the context's memory, and
  // cross-entropy: labels (≥ B values), or mean squared error: targets (≥ B rows × outputs(),
  // the first B used). Each overload throws on a trainer built for the other loss. Queued; never
  // waits for the device.
  void step(const Tensor& x, const LabelTensor& labels, const Fill& fill = nullptr,
            Gather gather = Gather::ThisStep);
  void step(const Tensor& x, const Tensor& targets, const Fill& fill = nullptr,
            Gather gather = Gather::ThisStep);

  // The loss (and, for cross-entropy, accuracy) of the steps since the last call; waits for the
  // device once. Throws NonFiniteLoss (the metrics start over all the same) when that loss is NaN
  // or infinite.
  MetricTotals take_metrics();
  // The same without starting over (a running loss for progress reports); waits once.
  MetricTotals peek_metrics();
  // The network's outputs for x (N×features, N ≥ 1, in the context's memory), computed in
  // batches of at most max_batch, in order: N×outputs() floats, row-major, in memory the caller
  // owns (a regression's predictions, a classifier's logits). Waits for the device once a batch.
  std::vector<float> predict(const Tensor& x);
  // The metrics of the network on a whole set (x: N×features; labels: N, or targets:
  // N×outputs()), in batches of at most max_batch, in order. Waits for the device once.
  MetricTotals evaluate(const Tensor& x, const LabelTensor& labels);
  MetricTotals evaluate(const Tensor& x, const Tensor& targets);

  TrainerOptions::Loss loss() const { return options_.loss; }
  int outputs() const { return outputs_; }  // the network's output width

  int64_t steps() const { return steps_; }  // steps taken
  // Resuming: the optimiser's step count (load_optimizer_state sets it) becomes the trainer's.
  void resume_from_optimizer() { steps_ = metrics_from_ = optimizer_->steps(); }
  float lr() const { return lr_at(optimizer_->schedule(), steps_); }  // the next step's rate
  const int64_t* device_step() const { return optimizer_->device_step(); }
  Optimizer& optimizer() { return *optimizer_; }
  Module& net() { return net_; }
  // Whether full-size steps replay a CUDA graph now, and if not, why not ("" when they do, or
  // before the first capture).
  bool graph_active() const {
    return use_graph_ && (static_cast<bool>(graphs_[0].exec) || static_cast<bool>(graphs_[1].exec));
  }
  const std::string& graph_note() const { return graph_note_; }

 private:
  // What a step's loss compares the network's output with: one of the two is set.
  struct Targets {
    const LabelTensor* labels = nullptr;  // cross-entropy
    const Tensor* values = nullptr;       // mean squared error
    const void* data() const;
  };

  void require_loss(TrainerOptions::Loss wanted, const char* call) const;
  void run_step(const Tensor& x, const Targets& targets, const Fill& fill, Gather gather);
  // first: the fill queued before the step (null: none); next: the one queued at its end, for the
  // next step (null: none). branched: the step's independent parts on side streams
  // (Context::Branches).
  void enqueue(const Tensor& x, const Targets& targets, const Fill* first, const Fill* next,
               bool branched);
  // The training loss (its metrics in train_metrics_) and its gradient; the same kernel adds 1 to
  // *step_count.
  const Tensor& loss_gradient(const Tensor& output, const Targets& targets, int64_t* step_count);
  MetricTotals evaluate_in_batches(const Tensor& x, int target_count, const Targets& targets);

  Context& ctx_;
  Module& net_;
  TrainerOptions options_;
  int outputs_;
  std::unique_ptr<Optimizer> optimizer_;
  SoftmaxCrossEntropy cross_entropy_;    // prepared with Loss::CrossEntropy
  MeanSquaredError mean_squared_error_;  // prepared with Loss::MeanSquaredError
  Metrics train_metrics_, eval_metrics_;
  int64_t steps_ = 0;
  int64_t metrics_from_ = 0;  // steps_ when the training metrics last started over
  // Throws NonFiniteLoss when t's loss is not finite.
  void require_finite(const MetricTotals& t) const;

  bool use_graph_;
  bool warmed_up_ = false;  // a full-size step has run uncaptured
  struct StepGraph {
    CudaGraph exec;
    const float* x = nullptr;  // the buffers it was captured with
    const void* targets = nullptr;
  };
  StepGraph graphs_[2];  // [0]: Gather::ThisStep, [1]: Gather::ThisAndNext
  std::string graph_note_;
  // The buffers the last step gathered the next batch into (null: it did not).
  const float* prefilled_x_ = nullptr;
  const void* prefilled_targets_ = nullptr;
};

}  // namespace engine
