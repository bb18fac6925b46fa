// Optimisers over one flat parameter buffer and one flat gradient buffer.
//
// The constructor moves every parameter it is given into one buffer, and every gradient into
// another: each Parameter's value and grad become views into them (a 256-byte aligned slice
// each, so the GEMMs keep their vector loads). step() is then one kernel that advances the step
// counter, plus one for all parameters. Inside a Context::Branches scope, where backward left
// gradients on side streams (Parameter::grad_stream), it is one kernel per run of consecutive
// parameters finished on one stream, queued there: a layer's update runs beside the rest of the
// backward pass. That counter lives in the context's memory, and the
// learning rate is computed from it where the update runs (LrSchedule), as is Adam's bias
// correction: a step queued once, as a CUDA graph, replays without any host write.
//
// Weight decay is L2, added to the gradient (g + wd·w) as torch.optim.SGD and torch.optim.Adam do;
// it applies to every parameter it is given.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/network/module.h"
#include "engine/runtime/backend.h"
#include "engine/runtime/context.h"
#include "engine/runtime/context_value.h"
#include "engine/runtime/tensor.h"

namespace engine {

class Optimizer {
 public:
  virtual ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // The step counter + 1, then w ← w − update(grad) for every parameter; queued, no wait.
  void step(Context& ctx);
  // step() for a caller whose own kernel adds 1 to the counter (Trainer's loss kernel, so that
  // counting costs no launch). count_step_elsewhere counts the step on the host and returns the
  // counter, in the context's memory; apply queues the updates, which read the counter as that
  // kernel leaves it: queue them after it in stream order.
  int64_t* count_step_elsewhere();
  void apply(Context& ctx);

  // The host's count of the steps queued launch by launch. A step captured into a CUDA graph is
  // counted once, however often the graph replays: read_steps() is the true count.
  int64_t steps() const { return steps_; }
  // The step counter as the device has it (waits for the stream): the steps actually taken.
  int64_t read_steps(Context& ctx) const;
  const LrSchedule& schedule() const { return schedule_; }
  // The step counter in the context's memory: the steps counted so far, read by the update (and
  // by a data loader that picks the batch of a step on the device).
  const int64_t* device_step() const { return step_.get(); }
  int64_t parameter_count() const { return values_.size(); }
  // Every parameter, flat (with each slice's padding, which stays zero).
  const Tensor& values() const { return values_; }

  // The state a resumed run needs besides the parameters: the named flat buffers (PyTorch's
  // names: momentum_buffer; exp_avg, exp_avg_sq) and the step count.
  virtual std::vector<std::pair<std::string, Tensor*>> state() = 0;
  // Sets the step count, on the host and in the context's memory (waits for the copy).
  void set_steps(Context& ctx, int64_t steps);

 protected:
  Optimizer(Context& ctx, std::vector<Parameter*> params, LrSchedule schedule, const char* who);
  // One launch over the flat buffers' floats [offset, offset + n) (whole parameter slices).
  virtual void update(Context& ctx, int64_t offset, int64_t n) = 0;

  Tensor values_, grads_;  // 1 × n, every parameter's slice
  LrSchedule schedule_;

 private:
  void count_step(Context& ctx);  // the counter + 1, queued on the current stream

  std::vector<Parameter*> params_;
  std::vector<int64_t> offsets_;  // params_[i]'s slice starts at offsets_[i]; one more: the end
  ContextValue<int64_t> step_;
  int64_t steps_ = 0;
};

struct SgdOptions {
  float lr = 0.05f;       // the peak rate of the schedule
  float momentum = 0.9f;  // 0: plain SGD, no velocity buffer
  float weight_decay = 0.0f;
  int64_t cosine_steps = 0;  // > 0: cosine decay from lr to 0 over this many steps
};

// v = μ·v + (g + wd·w);  w −= lr·v   (PyTorch's formulation, dampening 0, no Nesterov)
class Sgd : public Optimizer {
 public:
  Sgd(Context& ctx, std::vector<Parameter*> params, SgdOptions options);
  std::vector<std::pair<std::string, Tensor*>> state() override;

 private:
  void update(Context& ctx, int64_t offset, int64_t n) override;
  SgdOptions options_;
  Tensor velocity_;  // flat; empty without momentum
};

struct AdamOptions {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
  int64_t cosine_steps = 0;  // > 0: cosine decay from lr to 0 over this many steps
};

// Adam with bias correction (Kingma & Ba, 2015):
//   m = β1·m + (1−β1)·g;  v = β2·v + (1−β2)·g²;  w −= lr · (m/(1−β1ᵗ)) / (√(v/(1−β2ᵗ)) + ε)
class Adam : public Optimizer {
 public:
  Adam(Context& ctx, std::vector<Parameter*> params, AdamOptions options);
  std::vector<std::pair<std::string, Tensor*>> state() override;

 private:
  void update(Context& ctx, int64_t offset, int64_t n) override;
  AdamOptions options_;
  Tensor m_, v_;  // flat
};

}  // namespace engine
