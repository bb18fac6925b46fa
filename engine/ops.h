// The engine's ops: each has a forward and (where it has inputs to differentiate) a backward, on
// both backends. Matrix products go through Context::gemm, i.e. through the chosen GEMM variant;
// the rest runs the engine's own kernels (kernels.cu) or host loops (host_ops.cpp).
//
// Every tensor must live on the context's device and have the shape stated; otherwise the op
// throws engine::Error naming the op, the argument and the shapes. Ops queue work on the context's
// stream and return without waiting.
#pragma once

#include <cstdint>

#include "engine/context.h"
#include "engine/tensor.h"

namespace engine {

// Linear layer, Y = X·Wᵀ + b.
//   x is B×in, w is out×in (as in PyTorch), b is 1×out, y is B×out.
//   The product is one NT GEMM (beta = 0); the bias is added by a small kernel.
void linear_forward(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y);

// Its backward, given dy (B×out):
//   dx  = dy·W      NN GEMM, beta = 0 (overwrites dx, B×in); skipped when dx is null, as for the
//                   first layer, whose input needs no gradient
//   dw += dyᵀ·x     TN GEMM, beta = 1 (out×in)
//   db += Σ_rows dy (1×out)
// Parameter gradients accumulate, as in PyTorch: zero them (Module::zero_grad) before each step.
void linear_backward(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dx,
                     Tensor& dw, Tensor& db);

// ReLU, y = max(x, 0); x and y have one shape.
void relu_forward(Context& ctx, const Tensor& x, Tensor& y);
// dx = dy where y > 0, else 0. Uses the forward's output y (y > 0 exactly where x > 0).
void relu_backward(Context& ctx, const Tensor& y, const Tensor& dy, Tensor& dx);

// Fused, numerically stable softmax cross-entropy, mean over the batch's true size B.
//   logits is B×C; labels points to B int32 values in the context's memory (device or host);
//   row_loss and row_correct are at least B×1 (per-example loss, and 1/0 for a correct/wrong
//   arg-max, −1 for a label outside [0, C)); dlogits (B×C) receives (softmax − onehot)/B, the
//   gradient of the mean loss, unless it is null (evaluation).
void softmax_cross_entropy(Context& ctx, const Tensor& logits, const int32_t* labels,
                           Tensor* dlogits, Tensor& row_loss, Tensor& row_correct);

// Fills t uniformly in (−bound, bound] from the context's seeded generator: cuRAND Philox on the
// GPU (curandGenerateUniform, then a scale kernel), std::mt19937_64 on the CPU.
void uniform_init(Context& ctx, Tensor& t, float bound);

// t = 0, queued on the stream.
void zero(Context& ctx, Tensor& t);

}  // namespace engine
