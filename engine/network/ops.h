// The engine's ops: each has a forward and (where it has inputs to differentiate) a backward, on
// both backends. Matrix products go through Context::gemm, i.e. through the chosen GEMM variant;
// the rest runs the engine's own kernels (runtime/kernels_*.cu) or host loops
// (runtime/host_ops.cpp).
//
// Every tensor must live on the context's device and have the shape stated; otherwise the op
// throws gemm_mlp::Error naming the op, the argument and the shapes. Ops queue work on the
// context's stream and return without waiting.
#pragma once

#include <cstdint>

#include "engine/runtime/backend.h"
#include "engine/runtime/context.h"
#include "engine/runtime/tensor.h"

namespace engine {

// What follows a linear layer's product in its forward pass: nothing, or a ReLU fused into the
// GEMM's epilogue (gemm.h), so that y = max(X·Wᵀ + b, 0) is written once.
enum class Activation { None, Relu };

// The GEMMs of a linear layer y = act(x·wᵀ + b) (x batch×in, w out×in) as gemm.h's problems, for
// the ops below:
//   forward          y[batch×out] = act(x·wᵀ + b)   NT, the bias (and ReLU) in the epilogue
//   input gradient   dx[batch×in] = dy·w            NN, masked where x ≤ 0 with relu_before
//   weight gradient  dw[out×in] = dyᵀ·x + beta·dw   TN
gemm::Problem forward_problem(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                              Activation act);
gemm::Problem input_gradient_problem(const Tensor& dy, const Tensor& w, const Tensor& x,
                                     bool relu_before, Tensor& dx);
gemm::Problem weight_gradient_problem(const Tensor& dy, const Tensor& x, float beta, Tensor& dw);

// Linear layer, Y = act(X·Wᵀ + b).
//   x is B×in, w is out×in (as in PyTorch), b is 1×out, y is B×out.
//   One NT GEMM whose epilogue adds the bias (and applies the ReLU): no second pass over y.
void linear_forward(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                    Activation act = Activation::None);

struct LinearBackwardOptions {
  // true: dw and db accumulate (+=), as in PyTorch, and must be zeroed before the step.
  // false: they are overwritten (beta = 0), so that a trainer needs no zeroing pass.
  bool accumulate = true;
  // x is a ReLU's output and dx should be the gradient before that ReLU: dx is masked where
  // x ≤ 0, in the dx GEMM's epilogue.
  bool relu_before = false;
};

// Its backward, given dy (B×out):
//   dx  = dy·W      NN GEMM, beta = 0 (overwrites dx, B×in), masked by x > 0 with relu_before;
//                   skipped when dx is null, as for the first layer, whose input needs no
//                   gradient
//   dw (+)= dyᵀ·x   TN GEMM (out×in)
//   db (+)= Σ_rows dy (1×out)
// Inside a Context::Branches scope, dw and db are queued on side streams forked where dy is
// ready (Context::fork), and dx on the current stream, so the three run side by side.
struct LinearGradStreams {
  int weight = 0, bias = 0;  // where dw and db are finished (Context stream indices; 0: main)
};
LinearGradStreams linear_backward(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& dy,
                                  Tensor* dx, Tensor& dw, Tensor& db,
                                  LinearBackwardOptions options = {});

// ReLU, y = max(x, 0); x and y have one shape.
void relu_forward(Context& ctx, const Tensor& x, Tensor& y);
// dx = dy where y > 0, else 0. Uses the forward's output y (y > 0 exactly where x > 0).
void relu_backward(Context& ctx, const Tensor& y, const Tensor& dy, Tensor& dx);

// Fused, numerically stable softmax cross-entropy with its metrics, in one kernel.
//   logits is B×C; labels holds at least B int32 values in the context's memory; dlogits (B×C)
//   receives (softmax − onehot)/B, the gradient of the batch's mean loss, unless it is null
//   (evaluation). The batch's loss sum, correct arg-max count and size are added to *counters
//   (in the context's memory), in a fixed order, so the sums are reproducible; a label outside
//   [0, C) is counted in counters->bad_labels instead.
//   scratch: on the GPU, a LossScratch in device memory, zeroed once (ContextValue<LossScratch>;
//   SoftmaxCrossEntropy::prepare makes one), through which the kernel's blocks combine the metrics;
//   null there is an error. The CPU needs none and ignores it.
//   step_count: null, or a counter in the context's memory that the same kernel adds 1 to after
//   the metrics (Trainer counts its step so, with no kernel of its own).
void softmax_cross_entropy(Context& ctx, const Tensor& logits, const LabelTensor& labels,
                           Tensor* dlogits, MetricCounters* counters, LossScratch* scratch,
                           int64_t* step_count = nullptr);

// Mean squared error with its metrics, in one kernel, as PyTorch's MSELoss (mean over all
// elements).
//   predictions is B×N; targets has at least B rows of N columns, of which the first B are used;
//   dpredictions (B×N) receives 2·(predictions − targets)/(B·N), the gradient of the batch's mean
//   loss, unless it is null (evaluation). Each row's mean squared error, summed over the rows in a
//   fixed order, and the batch size are added to *counters (in the context's memory); a target
//   that is NaN or infinite is counted in counters->bad_targets. scratch and step_count as for
//   softmax_cross_entropy.
void mean_squared_error(Context& ctx, const Tensor& predictions, const Tensor& targets,
                        Tensor* dpredictions, MetricCounters* counters, LossScratch* scratch,
                        int64_t* step_count = nullptr);

// Fills t uniformly in (−bound, bound] from the context's seeded generator: cuRAND Philox on the
// GPU (curandGenerateUniform, then a scale kernel), std::mt19937_64 on the CPU.
void uniform_init(Context& ctx, Tensor& t, float bound);

// t = 0, queued on the stream.
void zero(Context& ctx, Tensor& t);

}  // namespace engine
