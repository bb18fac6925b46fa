// A small module API in the style of torch.nn, enough for MLPs and other toy models.
//
//   engine::Sequential net;
//   net.add<engine::Linear>(ctx, 784, 1024);
//   net.add<engine::ReLU>();
//   net.add<engine::Linear>(ctx, 1024, 10);
//   net.prepare(ctx, 256);            // activation and gradient buffers for batches of ≤ 256
//   const Tensor& logits = net.forward(ctx, x);
//   net.zero_grad(ctx);  net.backward(ctx, dlogits);
//
// Buffers are allocated once, by prepare(), for the largest batch; forward and backward on a
// smaller batch use views of their first rows. So a training step allocates nothing.
//
// Fusion: prepare() finds each Linear followed by a ReLU. The Linear then writes max(X·Wᵀ + b, 0)
// from its GEMM's epilogue and the ReLU passes it through; in the backward pass the Linear after
// that ReLU masks its input gradient in its dx GEMM's epilogue, and the ReLU passes that through
// too. The arithmetic is the same as unfused, with two fewer passes over memory per pair.
// A module remembers what its backward needs (Linear: its input; ReLU: its output) from the last
// forward, so backward must follow the forward of the same batch.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/runtime/context.h"
#include "engine/runtime/tensor.h"

namespace engine {

// A trainable tensor and its gradient, same shape, same device.
struct Parameter {
  std::string name;  // "weight", "bias"; Sequential prefixes the layer index: "0.weight"
  Tensor value;
  Tensor grad;
  // The stream on which the last backward finished grad (Context::fork; 0: the main stream), so
  // that an optimiser can update this parameter there as soon as it is ready.
  int grad_stream = 0;
};

class Module {
 public:
  virtual ~Module() = default;

  // Allocates the buffers for batches of up to max_batch rows of in_features columns and returns
  // the number of output features. Call outside the training step.
  virtual int prepare(Context& ctx, int max_batch, int in_features) = 0;
  // x is B×in (B ≤ max_batch); returns B×out, a view of the module's buffer that stays valid
  // until the next forward.
  virtual const Tensor& forward(Context& ctx, const Tensor& x) = 0;
  // dy is B×out for the last forward's batch; accumulates parameter gradients and returns dx
  // (B×in), or an empty tensor when this module's input needs no gradient.
  virtual const Tensor& backward(Context& ctx, const Tensor& dy) = 0;
  virtual std::vector<Parameter*> parameters() { return {}; }
  // One line, e.g. "Linear(784 -> 1024)".
  virtual std::string describe() const = 0;
  // The input width this module insists on, or 0 if it takes any (ReLU).
  virtual int in_features() const { return 0; }

  void zero_grad(Context& ctx);  // every parameter's gradient = 0 (queued, no allocation)
  int64_t parameter_count();

  // The first module of a network gets no input gradient: Linear then skips its dx GEMM.
  void set_needs_input_grad(bool needed) { needs_input_grad_ = needed; }
  bool needs_input_grad() const { return needs_input_grad_; }

  // true (the default, as in PyTorch): backward adds to the parameter gradients, which zero_grad
  // clears. false: backward overwrites them, so a trainer needs no zeroing pass. A Sequential
  // hands its setting to its modules in prepare().
  void set_accumulate_grads(bool accumulate) { accumulate_grads_ = accumulate; }
  bool accumulate_grads() const { return accumulate_grads_; }

 protected:
  // Throws unless prepare() ran and x fits it (rows ≤ max_batch, cols = expected).
  void check_input(const Tensor& x, int max_batch, int cols, const char* who) const;

 private:
  bool needs_input_grad_ = true;
  bool accumulate_grads_ = true;
};

// Y = X·Wᵀ + b with W out×in, Kaiming-uniform initialised from the context's generator:
// W ~ U(−√(6/in), √(6/in)) (He et al., for ReLU networks), b ~ U(−1/√in, 1/√in) (PyTorch's bias).
class Linear : public Module {
 public:
  Linear(Context& ctx, int in, int out);

  int prepare(Context& ctx, int max_batch, int in_features) override;
  const Tensor& forward(Context& ctx, const Tensor& x) override;
  const Tensor& backward(Context& ctx, const Tensor& dy) override;
  std::vector<Parameter*> parameters() override { return {&weight_, &bias_}; }
  std::string describe() const override;
  int in_features() const override { return in_; }

  Parameter& weight() { return weight_; }
  Parameter& bias() { return bias_; }

  // Set by Sequential::prepare (see Fusion above): apply the following ReLU in the forward GEMM;
  // mask the input gradient by the input (a ReLU's output) in the dx GEMM.
  void fuse_relu_after(bool fused) { relu_after_ = fused; }
  void fuse_relu_before(bool fused) { relu_before_ = fused; }

 private:
  int in_, out_;
  int max_batch_ = 0;
  bool relu_after_ = false, relu_before_ = false;
  Parameter weight_, bias_;
  Tensor x_;            // view of the last forward's input
  Tensor y_buf_, y_;    // output buffer (max_batch×out) and the current batch's view
  Tensor dx_buf_, dx_;  // input gradient (max_batch×in), allocated only if needed
};

class ReLU : public Module {
 public:
  int prepare(Context& ctx, int max_batch, int in_features) override;
  const Tensor& forward(Context& ctx, const Tensor& x) override;
  const Tensor& backward(Context& ctx, const Tensor& dy) override;
  std::string describe() const override { return "ReLU"; }

  // Set by Sequential::prepare (see Fusion above): the Linear before applies this ReLU, so forward
  // passes its input through; and, with masked_after, the Linear after masks the gradient, so
  // backward passes it through too.
  void set_fused(bool applied_before, bool masked_after) {
    applied_before_ = applied_before;
    masked_after_ = masked_after;
  }

 private:
  int max_batch_ = 0, features_ = 0;
  bool applied_before_ = false, masked_after_ = false;
  Tensor y_buf_, y_;
  Tensor dx_buf_, dx_;
};

// Runs its modules in order. A network's input is data, so by default a Sequential computes no
// input gradient (its first Linear skips the dx GEMM); set_needs_input_grad(true) changes that,
// and a Sequential nested in another gets it from its parent.
class Sequential : public Module {
 public:
  Sequential() { set_needs_input_grad(false); }

  // Whether prepare() fuses each Linear → ReLU pair (see Fusion above); on by default.
  void set_fusion(bool fuse) { fuse_ = fuse; }

  // Appends a module built in place and returns it; its parameters get the prefix "<index>.".
  template <class M, class... Args>
  M& add(Args&&... args) {
    auto module = std::make_unique<M>(std::forward<Args>(args)...);
    M& ref = *module;
    add(std::move(module));
    return ref;
  }
  Module& add(std::unique_ptr<Module> module);

  int prepare(Context& ctx, int max_batch, int in_features) override;
  // Takes the input width from the first module (which must fix it, as Linear does).
  int prepare(Context& ctx, int max_batch);
  const Tensor& forward(Context& ctx, const Tensor& x) override;
  const Tensor& backward(Context& ctx, const Tensor& dy) override;
  std::vector<Parameter*> parameters() override;
  std::string describe() const override;  // one line per module
  int in_features() const override;

  size_t size() const { return modules_.size(); }
  Module& operator[](size_t i) { return *modules_.at(i); }

 private:
  std::vector<std::unique_ptr<Module>> modules_;
  bool prepared_ = false;
  bool fuse_ = true;
  Tensor empty_;
};

}  // namespace engine
