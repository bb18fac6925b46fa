// Tensor, Context, module API, optimisers and checkpoints on the CPU backend, including the
// errors that misuse must produce.
#include "engine/engine.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "expect_error.h"

namespace {

using engine::Context;
using engine::Device;
using engine::Tensor;

// ---------------------------------------------------------------------------------------------
// Tensor

TEST(Tensor, OwningIsZeroFilledAndMovable) {
  Tensor t(Device::CPU, 2, 3);
  EXPECT_EQ(t.rows(), 2);
  EXPECT_EQ(t.cols(), 3);
  EXPECT_EQ(t.size(), 6);
  EXPECT_TRUE(t.owning());
  EXPECT_EQ(t.shape(), "2x3");
  for (float v : t.download()) EXPECT_EQ(v, 0.0f);
  const float* p = t.data();
  Tensor u = std::move(t);
  EXPECT_EQ(u.data(), p);
  EXPECT_TRUE(t.empty());
  static_assert(!std::is_copy_constructible_v<Tensor>, "no hidden copies");
  static_assert(!std::is_copy_assignable_v<Tensor>, "no hidden copies");
}

TEST(Tensor, UploadDownloadAndCopy) {
  Tensor t = Tensor::from_host(Device::CPU, 2, 2, {1, 2, 3, 4});
  EXPECT_EQ(t.download(), (std::vector<float>{1, 2, 3, 4}));
  Tensor u(Device::CPU, 2, 2);
  u.copy_from(t);
  EXPECT_EQ(u.download(), t.download());
  EXPECT_THROW_WITH(t.upload({1, 2, 3}), gemm_mlp::Error, "3 values into a 2x2");
  Tensor wrong(Device::CPU, 4, 1);
  EXPECT_THROW_WITH(wrong.copy_from(t), gemm_mlp::Error, "2x2");
}

TEST(Tensor, ViewsShareMemoryAndRespectReadOnly) {
  Tensor t = Tensor::from_host(Device::CPU, 3, 2, {1, 2, 3, 4, 5, 6});
  Tensor head = t.first_rows(2);
  EXPECT_FALSE(head.owning());
  EXPECT_EQ(head.rows(), 2);
  head.data()[0] = 10;  // writes through to t
  EXPECT_EQ(t.download()[0], 10);

  const Tensor& ct = t;
  Tensor ro = ct.first_rows(1);
  EXPECT_TRUE(ro.read_only());
  EXPECT_THROW_WITH(ro.data(), gemm_mlp::Error, "read-only");
  const std::vector<float> host = {7, 8};
  Tensor ext = Tensor::view(Device::CPU, host.data(), 1, 2);
  EXPECT_THROW_WITH(ext.upload({1, 2}), gemm_mlp::Error, "read-only");
  EXPECT_EQ(static_cast<const Tensor&>(ext).data()[1], 8);
}

TEST(Tensor, BadShapesAreErrors) {
  EXPECT_THROW_WITH(Tensor(Device::CPU, 0, 3), gemm_mlp::Error, "0x3");
  Tensor t(Device::CPU, 4, 2);
  EXPECT_THROW_WITH(t.first_rows(5), gemm_mlp::Error, "first_rows(5)");
  EXPECT_THROW_WITH(t.first_rows(0), gemm_mlp::Error, "first_rows(0)");
  EXPECT_THROW_WITH(Tensor::view(Device::CPU, static_cast<float*>(nullptr), 1, 1), gemm_mlp::Error,
                    "null");
}

// ---------------------------------------------------------------------------------------------
// Context

TEST(Context, VariantMustMatchTheDevice) {
  EXPECT_THROW_WITH(Context(Device::CPU, "vec", 1), gemm_mlp::Error, "'vec' runs on the GPU");
  EXPECT_THROW_WITH(Context(Device::CUDA, "cpu", 1), gemm_mlp::Error, "'cpu' runs on the host");
  EXPECT_THROW_WITH(Context(Device::CPU, "no_such_kernel", 1), gemm_mlp::Error, "no_such_kernel");
  // Every host variant in the table is accepted by a CPU context.
  for (const gemm::Variant& v : gemm::variants())
    if (v.device == Device::CPU) {
      EXPECT_NO_THROW(Context(Device::CPU, v, 1)) << v.name;
    }
}

TEST(Context, CpuHasNoCurandAndTimesEpochs) {
  Context ctx(Device::CPU, "cpu", 3);
  EXPECT_EQ(ctx.stream(), nullptr);
  EXPECT_THROW_WITH(ctx.curand(), gemm_mlp::Error, "cuRAND");
  EXPECT_THROW_WITH(ctx.end_epoch(), gemm_mlp::Error, "without begin_epoch");
  ctx.begin_epoch();
  EXPECT_THROW_WITH(ctx.begin_epoch(), gemm_mlp::Error, "while an epoch");
  EXPECT_THROW_WITH(ctx.reserve_gemm_timers(4), gemm_mlp::Error, "inside an epoch");
  Tensor x = Tensor::from_host(Device::CPU, 2, 2, {1, 2, 3, 4});
  Tensor w = Tensor::from_host(Device::CPU, 2, 2, {1, 0, 0, 1});
  Tensor b(Device::CPU, 1, 2), y(Device::CPU, 2, 2);
  engine::linear_forward(ctx, x, w, b, y);
  const engine::EpochTimes t = ctx.end_epoch();
  EXPECT_EQ(t.gemm_calls, 1);
  EXPECT_GE(t.epoch_s, t.gemm_s);
  EXPECT_EQ(y.download(), (std::vector<float>{1, 2, 3, 4}));
}

// On the CPU there are no side streams: everything runs in order on the main "stream", 0.
TEST(Context, CpuBranchesRunInOrder) {
  Context ctx(Device::CPU, "cpu", 3);
  const Context::Branches branches(ctx);
  EXPECT_EQ(ctx.fork(), 0);
  EXPECT_TRUE(ctx.forked(0));
  EXPECT_FALSE(ctx.forked(1));
  int ran = 0;
  ctx.on(0, [&] { ++ran; });
  EXPECT_EQ(ran, 1);
  EXPECT_THROW_WITH(ctx.on(1, [] {}), gemm_mlp::Error, "on(1) of a stream not forked");
  EXPECT_THROW_WITH(ctx.follow_main(3), gemm_mlp::Error, "follow_main(3) of a stream not forked");
  EXPECT_THROW_WITH(Context::Branches inner(ctx), gemm_mlp::Error, "Branches inside Branches");
}

TEST(Context, SameSeedSameInit) {
  Context a(Device::CPU, "cpu", 42), b(Device::CPU, "cpu", 42), c(Device::CPU, "cpu", 43);
  engine::Linear la(a, 5, 3), lb(b, 5, 3), lc(c, 5, 3);
  EXPECT_EQ(la.weight().value.download(), lb.weight().value.download());
  EXPECT_NE(la.weight().value.download(), lc.weight().value.download());
}

// ---------------------------------------------------------------------------------------------
// Ops: shape and device errors name the op and the shapes.

TEST(Ops, ShapeErrors) {
  Context ctx(Device::CPU, "cpu", 1);
  Tensor x(Device::CPU, 4, 3), w(Device::CPU, 2, 5), b(Device::CPU, 1, 2), y(Device::CPU, 4, 2);
  EXPECT_THROW_WITH(engine::linear_forward(ctx, x, w, b, y), gemm_mlp::Error,
                    "linear_forward: w (out x in, in = x.cols) is 2x5, expected 2x3");
  Tensor w_ok(Device::CPU, 2, 3), y_bad(Device::CPU, 3, 2);
  EXPECT_THROW_WITH(engine::linear_forward(ctx, x, w_ok, b, y_bad), gemm_mlp::Error,
                    "y (batch x out)");
  Tensor empty;
  EXPECT_THROW_WITH(engine::relu_forward(ctx, empty, y), gemm_mlp::Error, "empty");
  EXPECT_THROW_WITH(
      engine::softmax_cross_entropy(ctx, y, engine::LabelTensor(), nullptr, nullptr, nullptr),
      gemm_mlp::Error, "labels is empty");
}

TEST(Ops, UniformInitStaysInBounds) {
  Context ctx(Device::CPU, "cpu", 5);
  Tensor t(Device::CPU, 100, 100);
  engine::uniform_init(ctx, t, 0.25f);
  double mean = 0.0;
  for (float v : t.download()) {
    EXPECT_LE(std::fabs(v), 0.25f);
    mean += v;
  }
  EXPECT_NEAR(mean / t.size(), 0.0, 0.01);
  EXPECT_THROW_WITH(engine::uniform_init(ctx, t, 0.0f), gemm_mlp::Error, "bound");
}

TEST(Loss, MetricsCountAndRejectBadLabels) {
  Context ctx(Device::CPU, "cpu", 1);
  engine::Metrics metrics(ctx);
  engine::SoftmaxCrossEntropy loss;
  const engine::LabelTensor one(Device::CPU, {0});
  EXPECT_THROW_WITH(loss.forward(ctx, Tensor(Device::CPU, 1, 3), one, metrics), gemm_mlp::Error,
                    "before prepare");
  loss.prepare(ctx, 4, 3);
  Tensor logits = Tensor::from_host(Device::CPU, 2, 3, {3, 1, 0, 0, 0, 5});
  const engine::LabelTensor labels(Device::CPU, {0, 1});  // first right, second wrong
  const Tensor& d = loss.forward_backward(ctx, logits, labels, metrics);
  EXPECT_EQ(d.rows(), 2);
  engine::MetricTotals t = metrics.read(ctx);
  EXPECT_EQ(t.seen, 2);
  EXPECT_EQ(t.correct, 1);
  EXPECT_DOUBLE_EQ(t.accuracy(), 0.5);
  EXPECT_GT(t.mean_loss(), 0.0);
  metrics.reset(ctx);
  EXPECT_EQ(metrics.read(ctx).seen, 0);

  const engine::LabelTensor bad(Device::CPU, {0, 3});
  loss.forward(ctx, logits, bad, metrics);
  EXPECT_THROW_WITH(metrics.read(ctx), gemm_mlp::Error, "outside [0, classes)");
  EXPECT_THROW_WITH(loss.forward(ctx, Tensor(Device::CPU, 5, 3), labels, metrics), gemm_mlp::Error,
                    "prepared for up to 4x3");
  EXPECT_THROW_WITH(loss.forward(ctx, Tensor(Device::CPU, 3, 3), labels, metrics), gemm_mlp::Error,
                    "2 labels for 3 rows");
}

// ---------------------------------------------------------------------------------------------
// Module API

TEST(Module, SequentialNamesPreparesAndRunsPartialBatches) {
  Context ctx(Device::CPU, "cpu", 1);
  engine::Sequential net;
  net.add<engine::Linear>(ctx, 4, 8);
  net.add<engine::ReLU>();
  net.add<engine::Linear>(ctx, 8, 3);
  std::vector<std::string> names;
  for (engine::Parameter* p : net.parameters()) names.push_back(p->name);
  EXPECT_EQ(names, (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  EXPECT_EQ(net.parameter_count(), 4 * 8 + 8 + 8 * 3 + 3);
  EXPECT_EQ(net.describe(), "Sequential(Linear(4 -> 8), ReLU, Linear(8 -> 3))");

  Tensor x(Device::CPU, 5, 4);
  EXPECT_THROW_WITH(net.forward(ctx, x), gemm_mlp::Error, "before prepare");
  EXPECT_EQ(net.prepare(ctx, 5), 3);
  EXPECT_THROW_WITH(net.add<engine::ReLU>(), gemm_mlp::Error, "after prepare");

  // A partial batch of 2 rows uses the first rows of the 5-row buffers.
  Tensor x2 = x.first_rows(2);
  const Tensor& y = net.forward(ctx, x2);
  EXPECT_EQ(y.rows(), 2);
  EXPECT_EQ(y.cols(), 3);
  Tensor dy = Tensor::from_host(Device::CPU, 2, 3, {1, 1, 1, 1, 1, 1});
  net.zero_grad(ctx);
  const Tensor& dx = net.backward(ctx, dy);
  EXPECT_TRUE(dx.empty());  // a network's input needs no gradient: the first dx GEMM is skipped
  Tensor x6(Device::CPU, 6, 4);
  EXPECT_THROW_WITH(net.forward(ctx, x6), gemm_mlp::Error, "prepared for up to 5x4");
  Tensor x_wide(Device::CPU, 2, 5);
  EXPECT_THROW_WITH(net.forward(ctx, x_wide), gemm_mlp::Error, "input is 2x5");

  net.zero_grad(ctx);
  for (engine::Parameter* p : net.parameters())
    for (float g : p->grad.download()) EXPECT_EQ(g, 0.0f);
}

TEST(Module, InputGradientOnRequestAndPrepareErrors) {
  Context ctx(Device::CPU, "cpu", 1);
  engine::Sequential net;
  net.add<engine::Linear>(ctx, 3, 2);
  net.set_needs_input_grad(true);
  net.prepare(ctx, 4);
  Tensor x(Device::CPU, 4, 3);
  net.forward(ctx, x);
  Tensor dy(Device::CPU, 4, 2);
  EXPECT_EQ(net.backward(ctx, dy).cols(), 3);

  engine::Sequential relu_first;
  relu_first.add<engine::ReLU>();
  EXPECT_THROW_WITH(relu_first.prepare(ctx, 4), gemm_mlp::Error, "does not fix the input width");
  engine::Sequential empty;
  EXPECT_THROW_WITH(empty.prepare(ctx, 4, 3), gemm_mlp::Error, "empty network");
  engine::Linear lin(ctx, 3, 2);
  EXPECT_THROW_WITH(lin.prepare(ctx, 4, 5), gemm_mlp::Error, "gets 5 input features");
  EXPECT_THROW_WITH(engine::Linear(ctx, 0, 2), gemm_mlp::Error, ">= 1");
  EXPECT_THROW_WITH(lin.backward(ctx, dy), gemm_mlp::Error, "backward before forward");
}

TEST(Module, KaimingUniformBounds) {
  Context ctx(Device::CPU, "cpu", 9);
  engine::Linear lin(ctx, 600, 50);
  const float wb = std::sqrt(6.0f / 600), bb = 1.0f / std::sqrt(600.0f);
  float wmax = 0, bmax = 0;
  for (float v : lin.weight().value.download()) wmax = std::max(wmax, std::fabs(v));
  for (float v : lin.bias().value.download()) bmax = std::max(bmax, std::fabs(v));
  EXPECT_LE(wmax, wb);
  EXPECT_GT(wmax, 0.95f * wb);  // 30000 draws reach close to the bound
  EXPECT_LE(bmax, bb);
}

// ---------------------------------------------------------------------------------------------
// Optimisers: one or two steps against values worked out by hand.

engine::Parameter scalar_parameter(float w, float g) {
  return {"p", Tensor::from_host(Device::CPU, 1, 1, {w}),
          Tensor::from_host(Device::CPU, 1, 1, {g})};
}

TEST(Optim, SgdMomentumWeightDecay) {
  Context ctx(Device::CPU, "cpu", 1);
  engine::Parameter p = scalar_parameter(1.0f, 0.2f);
  engine::Sgd sgd(ctx, {&p}, {0.5f, 0.9f, 0.1f});
  // g' = 0.2 + 0.1·1 = 0.3;  v = 0.3;  w = 1 − 0.5·0.3 = 0.85
  sgd.step(ctx);
  EXPECT_FLOAT_EQ(p.value.download()[0], 0.85f);
  // g' = 0.2 + 0.1·0.85 = 0.285;  v = 0.9·0.3 + 0.285 = 0.555;  w = 0.85 − 0.5·0.555 = 0.5725
  sgd.step(ctx);
  EXPECT_FLOAT_EQ(p.value.download()[0], 0.5725f);
}

TEST(Optim, PlainSgd) {
  Context ctx(Device::CPU, "cpu", 1);
  engine::Parameter p = scalar_parameter(1.0f, 0.2f);
  engine::Sgd sgd(ctx, {&p}, {0.5f, 0.0f, 0.0f});
  sgd.step(ctx);
  sgd.step(ctx);
  EXPECT_FLOAT_EQ(p.value.download()[0], 0.8f);  // 1 − 2·0.5·0.2
}

TEST(Optim, AdamBiasCorrected) {
  Context ctx(Device::CPU, "cpu", 1);
  engine::Parameter p = scalar_parameter(1.0f, 0.2f);
  engine::Adam adam(ctx, {&p}, {0.1f, 0.9f, 0.999f, 1e-8f, 0.0f});
  // Step 1: m = 0.02, v = 4e-5; m/(1−0.9) = 0.2, v/(1−0.999) = 0.04 → w = 1 − 0.1·0.2/0.2 = 0.9
  adam.step(ctx);
  EXPECT_NEAR(p.value.download()[0], 0.9f, 1e-6);
  // Step 2 with g = −0.4: m = 0.018 − 0.04 = −0.022, v = 3.996e-5 + 1.6e-4 = 1.9996e-4;
  // m̂ = −0.022/0.19 = −0.1157895, v̂ = 1.9996e-4/0.001999 = 0.1000300, √v̂ = 0.3162752
  // w = 0.9 + 0.1·0.1157895/0.3162752 = 0.9366104
  p.grad.upload({-0.4f});
  adam.step(ctx);
  EXPECT_NEAR(p.value.download()[0], 0.9366104f, 2e-6);
  EXPECT_EQ(adam.steps(), 2);
}

TEST(Optim, BadOptionsAreErrors) {
  Context ctx(Device::CPU, "cpu", 1);
  engine::Parameter p = scalar_parameter(1.0f, 0.2f);
  EXPECT_THROW_WITH(engine::Sgd(ctx, {&p}, {-1.0f, 0.9f, 0.0f}), gemm_mlp::Error, "sgd");
  EXPECT_THROW_WITH(engine::Adam(ctx, {&p}, {0.1f, 1.0f, 0.999f, 1e-8f, 0.0f}), gemm_mlp::Error,
                    "beta1");
  EXPECT_THROW_WITH(engine::Sgd(ctx, {nullptr}, {}), gemm_mlp::Error, "null parameter");
}

}  // namespace
