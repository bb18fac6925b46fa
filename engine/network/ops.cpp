#include "engine/network/ops.h"

#include <algorithm>
#include <random>

#include "base/cuda_check.h"
#include "engine/network/checks.h"
#include "engine/runtime/backend.h"
#include "engine/runtime/curand_check.h"

namespace engine {

using detail::require_on;
using detail::require_shape;

namespace {

// c = op_a(a)·op_b(b) + beta·c, every operand a contiguous row-major tensor.
gemm::Problem product(gemm::Op op_a, const Tensor& a, gemm::Op op_b, const Tensor& b, float beta,
                      Tensor& c) {
  gemm::Problem p;
  p.op_a = op_a, p.op_b = op_b;
  p.m = c.rows(), p.n = c.cols(), p.k = op_a == gemm::Op::N ? a.cols() : a.rows();
  p.a = a.data(), p.lda = a.cols();
  p.b = b.data(), p.ldb = b.cols();
  p.beta = beta;
  p.c = c.data(), p.ldc = c.cols();
  return p;
}

}  // namespace

// The three GEMMs of a linear layer (ops.h).

// y[batch×out] = act(x · wᵀ + b): NT, the bias (and ReLU) in the epilogue.
gemm::Problem forward_problem(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                              Activation act) {
  gemm::Problem p = product(gemm::Op::N, x, gemm::Op::T, w, 0.0f, y);
  p.epilogue = act == Activation::Relu ? gemm::EpilogueOp::BiasRelu : gemm::EpilogueOp::Bias;
  p.bias = b.data();
  return p;
}

// dx[batch×in] = dy · w: NN; masked where x ≤ 0 in the epilogue when x is a ReLU's output.
gemm::Problem input_gradient_problem(const Tensor& dy, const Tensor& w, const Tensor& x,
                                     bool relu_before, Tensor& dx) {
  gemm::Problem p = product(gemm::Op::N, dy, gemm::Op::N, w, 0.0f, dx);
  if (relu_before) {
    p.epilogue = gemm::EpilogueOp::ReluMask;
    p.mask = x.data();
    p.ldmask = x.cols();
  }
  return p;
}

// dw[out×in] = dyᵀ · x + beta·dw: TN; beta 1 accumulates, 0 overwrites.
gemm::Problem weight_gradient_problem(const Tensor& dy, const Tensor& x, float beta, Tensor& dw) {
  return product(gemm::Op::T, dy, gemm::Op::N, x, beta, dw);
}

void linear_forward(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                    Activation act) {
  require_on(ctx, x, "linear_forward: x");
  require_on(ctx, w, "linear_forward: w");
  require_on(ctx, b, "linear_forward: b");
  require_on(ctx, y, "linear_forward: y");
  const int batch = x.rows(), in = x.cols(), out = w.rows();
  require_shape(w, out, in, "linear_forward: w (out x in, in = x.cols)");
  require_shape(b, 1, out, "linear_forward: b (1 x out)");
  require_shape(y, batch, out, "linear_forward: y (batch x out)");

  ctx.gemm(forward_problem(x, w, b, y, act));
}

LinearGradStreams linear_backward(Context& ctx, const Tensor& x, const Tensor& w, const Tensor& dy,
                                  Tensor* dx, Tensor& dw, Tensor& db,
                                  LinearBackwardOptions options) {
  require_on(ctx, x, "linear_backward: x");
  require_on(ctx, w, "linear_backward: w");
  require_on(ctx, dy, "linear_backward: dy");
  require_on(ctx, dw, "linear_backward: dw");
  require_on(ctx, db, "linear_backward: db");
  const int batch = x.rows(), in = x.cols(), out = w.rows();
  require_shape(w, out, in, "linear_backward: w (out x in, in = x.cols)");
  require_shape(dy, batch, out, "linear_backward: dy (batch x out)");
  require_shape(dw, out, in, "linear_backward: dw (out x in)");
  require_shape(db, 1, out, "linear_backward: db (1 x out)");
  const float grad_beta = options.accumulate ? 1.0f : 0.0f;

  if (dx != nullptr) {
    require_on(ctx, *dx, "linear_backward: dx");
    require_shape(*dx, batch, in, "linear_backward: dx (batch x in)");
  }

  LinearGradStreams streams;
  streams.weight = ctx.fork();
  ctx.on(streams.weight, [&] { ctx.gemm(weight_gradient_problem(dy, x, grad_beta, dw)); });
  streams.bias = ctx.fork();
  ctx.on(streams.bias, [&] {
    if (ctx.is_cuda())
      cuda::column_sums(dy.data(), db.data(), batch, out, grad_beta, ctx.stream());
    else
      host::column_sums(dy.data(), db.data(), batch, out, grad_beta);
  });
  if (dx != nullptr) ctx.gemm(input_gradient_problem(dy, w, x, options.relu_before, *dx));
  return streams;
}

void relu_forward(Context& ctx, const Tensor& x, Tensor& y) {
  require_on(ctx, x, "relu_forward: x");
  require_on(ctx, y, "relu_forward: y");
  require_shape(y, x.rows(), x.cols(), "relu_forward: y (shape of x)");
  if (ctx.is_cuda())
    cuda::relu_forward(x.data(), y.data(), x.size(), ctx.stream());
  else
    host::relu_forward(x.data(), y.data(), x.size());
}

void relu_backward(Context& ctx, const Tensor& y, const Tensor& dy, Tensor& dx) {
  require_on(ctx, y, "relu_backward: y");
  require_on(ctx, dy, "relu_backward: dy");
  require_on(ctx, dx, "relu_backward: dx");
  require_shape(dy, y.rows(), y.cols(), "relu_backward: dy (shape of y)");
  require_shape(dx, y.rows(), y.cols(), "relu_backward: dx (shape of y)");
  if (ctx.is_cuda())
    cuda::relu_backward(y.data(), dy.data(), dx.data(), y.size(), ctx.stream());
  else
    host::relu_backward(y.data(), dy.data(), dx.data(), y.size());
}

namespace {

// The loss kernels' cross-block scratch: required on the GPU, unused on the CPU.
void require_loss_scratch(const Context& ctx, const LossScratch* scratch, const char* op) {
  if (ctx.is_cuda() && scratch == nullptr)
    throw Error(std::string(op) +
                ": scratch is a null pointer (on the GPU the loss needs a LossScratch)");
}

}  // namespace

void softmax_cross_entropy(Context& ctx, const Tensor& logits, const LabelTensor& labels,
                           Tensor* dlogits, MetricCounters* counters, LossScratch* scratch,
                           int64_t* step_count) {
  require_on(ctx, logits, "softmax_cross_entropy: logits");
  const int batch = logits.rows(), classes = logits.cols();
  if (labels.empty()) throw Error("softmax_cross_entropy: labels is empty");
  if (labels.device() != ctx.device())
    throw Error(std::string("softmax_cross_entropy: labels live on ") +
                device_name(labels.device()) + " but the context is " + device_name(ctx.device()));
  if (labels.size() < batch)
    throw Error("softmax_cross_entropy: " + std::to_string(labels.size()) + " labels for " +
                std::to_string(batch) + " rows of logits");
  if (counters == nullptr) throw Error("softmax_cross_entropy: counters is a null pointer");
  require_loss_scratch(ctx, scratch, "softmax_cross_entropy");
  float* d = nullptr;
  if (dlogits != nullptr) {
    require_on(ctx, *dlogits, "softmax_cross_entropy: dlogits");
    require_shape(*dlogits, batch, classes, "softmax_cross_entropy: dlogits (shape of logits)");
    d = dlogits->data();
  }
  const float inv_batch = 1.0f / static_cast<float>(batch);
  if (ctx.is_cuda()) {
    cuda::softmax_xent(logits.data(), labels.data(), d, batch, classes, inv_batch, counters,
                       scratch, step_count, ctx.stream());
  } else {
    host::softmax_xent(logits.data(), labels.data(), d, batch, classes, inv_batch, counters);
    if (step_count != nullptr) ++*step_count;
  }
}

void mean_squared_error(Context& ctx, const Tensor& predictions, const Tensor& targets,
                        Tensor* dpredictions, MetricCounters* counters, LossScratch* scratch,
                        int64_t* step_count) {
  require_on(ctx, predictions, "mean_squared_error: predictions");
  require_on(ctx, targets, "mean_squared_error: targets");
  const int batch = predictions.rows(), cols = predictions.cols();
  if (targets.rows() < batch || targets.cols() != cols)
    throw Error("mean_squared_error: targets are " + targets.shape() + ", predictions " +
                predictions.shape() + " (targets need the same columns and at least as many rows)");
  if (counters == nullptr) throw Error("mean_squared_error: counters is a null pointer");
  require_loss_scratch(ctx, scratch, "mean_squared_error");
  float* d = nullptr;
  if (dpredictions != nullptr) {
    require_on(ctx, *dpredictions, "mean_squared_error: dpredictions");
    require_shape(*dpredictions, batch, cols,
                  "mean_squared_error: dpredictions (shape of predictions)");
    d = dpredictions->data();
  }
  const float grad_scale = 2.0f / (static_cast<float>(batch) * static_cast<float>(cols));
  if (ctx.is_cuda()) {
    cuda::squared_error(predictions.data(), targets.data(), d, batch, cols, grad_scale, counters,
                        scratch, step_count, ctx.stream());
  } else {
    host::squared_error(predictions.data(), targets.data(), d, batch, cols, grad_scale, counters);
    if (step_count != nullptr) ++*step_count;
  }
}

void uniform_init(Context& ctx, Tensor& t, float bound) {
  require_on(ctx, t, "uniform_init: t");
  if (!(bound > 0.0f)) throw Error("uniform_init: bound must be > 0, got " + std::to_string(bound));
  if (ctx.is_cuda()) {
    CURAND_CHECK(curandGenerateUniform(ctx.curand(), t.data(), static_cast<size_t>(t.size())));
    cuda::scale_uniform(t.data(), t.size(), bound, ctx.stream());
  } else {
    std::uniform_real_distribution<float> dist(-bound, bound);
    float* w = t.data();
    for (int64_t i = 0; i < t.size(); ++i) w[i] = dist(ctx.host_rng());
  }
}

void zero(Context& ctx, Tensor& t) {
  require_on(ctx, t, "zero: t");
  const size_t bytes = static_cast<size_t>(t.size()) * sizeof(float);
  if (ctx.is_cuda())
    CUDA_CHECK(cudaMemsetAsync(t.data(), 0, bytes, ctx.stream()));
  else
    std::fill_n(t.data(), t.size(), 0.0f);
}

}  // namespace engine
