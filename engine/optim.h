// Optimisers: one kernel (GPU) or loop (CPU) per parameter per step. Their state (momentum,
// Adam's moments) is allocated in the constructor; step() allocates nothing and never waits for
// the device. Adam's step count lives on the host and reaches the kernel as an argument.
//
// Weight decay is L2, added to the gradient (g + wd·w) as torch.optim.SGD and torch.optim.Adam do;
// it applies to every parameter it is given.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/context.h"
#include "engine/module.h"
#include "engine/tensor.h"

namespace engine {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual void step(Context& ctx) = 0;  // w ← w − update(grad); queued on the stream
  void set_lr(float lr) { lr_ = lr; }   // for schedules: takes effect at the next step
  float lr() const { return lr_; }

 protected:
  Optimizer(std::vector<Parameter*> params, float lr);
  std::vector<Parameter*> params_;
  float lr_;
};

struct SgdOptions {
  float lr = 0.05f;
  float momentum = 0.9f;  // 0: plain SGD, no velocity buffers
  float weight_decay = 0.0f;
};

// v = μ·v + (g + wd·w);  w −= lr·v   (PyTorch's formulation, dampening 0, no Nesterov)
class Sgd : public Optimizer {
 public:
  Sgd(Context& ctx, std::vector<Parameter*> params, SgdOptions options);
  void step(Context& ctx) override;

 private:
  SgdOptions options_;
  std::vector<Tensor> velocity_;  // one per parameter; empty without momentum
};

struct AdamOptions {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
};

// Adam with bias correction (Kingma & Ba, 2015):
//   m = β1·m + (1−β1)·g;  v = β2·v + (1−β2)·g²;  w −= lr · (m/(1−β1ᵗ)) / (√(v/(1−β2ᵗ)) + ε)
class Adam : public Optimizer {
 public:
  Adam(Context& ctx, std::vector<Parameter*> params, AdamOptions options);
  void step(Context& ctx) override;
  int64_t steps() const { return t_; }

 private:
  AdamOptions options_;
  std::vector<Tensor> m_, v_;
  int64_t t_ = 0;
};

}  // namespace engine
