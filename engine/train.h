// The two steps of a classifier, launch by launch, with PyTorch's accumulating gradients (zeroed
// first). engine::Trainer (trainer.h) is the fused, graph-replayed form. Neither allocates nor
// waits for the device.
#pragma once

#include <cstdint>

#include "engine/context.h"
#include "engine/loss.h"
#include "engine/module.h"
#include "engine/optim.h"
#include "engine/tensor.h"

namespace engine {

// One optimisation step on a batch: x is B×features, labels has ≥ B values in the context's
// memory.
// zero_grad → forward → softmax cross-entropy (adds to metrics) → backward → optimiser step.
inline void train_step(Context& ctx, Module& net, SoftmaxCrossEntropy& loss, Optimizer& opt,
                       const Tensor& x, const LabelTensor& labels, Metrics& metrics) {
  net.zero_grad(ctx);
  const Tensor& logits = net.forward(ctx, x);
  const Tensor& dlogits = loss.forward_backward(ctx, logits, labels, metrics);
  net.backward(ctx, dlogits);
  opt.step(ctx);
}

// Forward and loss only, for evaluation.
inline void eval_step(Context& ctx, Module& net, SoftmaxCrossEntropy& loss, const Tensor& x,
                      const LabelTensor& labels, Metrics& metrics) {
  loss.forward(ctx, net.forward(ctx, x), labels, metrics);
}

}  // namespace engine
