// The Trainer's losses on the CPU backend: mean squared error trains a regression, matches the
// gradient a user would write by hand, and is kept apart from cross-entropy; the output width
// comes from the network. (On the GPU: trainer_gpu_test.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "engine/engine.h"
#include "expect_error.h"
#include "random_data.h"

namespace {

using engine::Context;
using engine::Device;
using engine::Tensor;
using Loss = engine::TrainerOptions::Loss;

engine::TrainerOptions options_for(Loss loss, int max_batch) {
  engine::TrainerOptions o;
  o.max_batch = max_batch;
  o.loss = loss;
  return o;
}

// A linear map y = A·x + b (3 → 2) is learnt by one Linear to a tiny loss, and the metrics are a
// regression's: the mean loss, no correct count.
TEST(Trainer, MeanSquaredErrorLearnsALinearMap) {
  const int in = 3, out = 2, n = 64;
  const std::vector<float> a = {0.5f, -1.0f, 2.0f, 1.5f, 0.25f, -0.75f}, b = {0.3f, -0.2f};
  std::mt19937_64 rng(21);
  const std::vector<float> xv = random_values(rng, n * in);
  std::vector<float> yv(n * out);
  for (int r = 0; r < n; ++r)
    for (int o = 0; o < out; ++o) {
      float y = b[o];
      for (int i = 0; i < in; ++i) y += a[o * in + i] * xv[r * in + i];
      yv[r * out + o] = y;
    }
  Context ctx(Device::CPU, "cpu", 4);
  engine::Sequential net;
  net.add<engine::Linear>(ctx, in, out);
  engine::TrainerOptions o = options_for(Loss::MeanSquaredError, 16);
  o.sgd.lr = 0.1f;
  engine::Trainer trainer(ctx, net, o);
  EXPECT_EQ(trainer.outputs(), out);
  EXPECT_EQ(trainer.loss(), Loss::MeanSquaredError);
  const Tensor x = Tensor::from_host(Device::CPU, n, in, xv);
  const Tensor y = Tensor::from_host(Device::CPU, n, out, yv);
  const double before = trainer.evaluate(x, y).mean_loss();
  for (int epoch = 0; epoch < 40; ++epoch)
    for (int start = 0; start < n; start += 16)
      trainer.step(Tensor::view(Device::CPU, x.data() + start * in, 16, in),
                   Tensor::view(Device::CPU, y.data() + start * out, 16, out));
  const engine::MetricTotals train = trainer.take_metrics();
  EXPECT_EQ(train.seen, 40 * n);
  EXPECT_EQ(train.correct, 0);
  const engine::MetricTotals t = trainer.evaluate(x, y);
  EXPECT_EQ(t.seen, n);
  EXPECT_GT(before, 0.5);
  EXPECT_LT(t.mean_loss(), 1e-4);
}

// One step of the trainer equals the step written out by hand with the host-side MSE gradient,
// 2·(prediction − target)/(B·outputs): the parameters come out bit for bit the same, and the
// reported loss is the mean over all elements.
TEST(Trainer, MeanSquaredErrorStepMatchesHandWrittenGradient) {
  const int batch = 5, in = 4, out = 3;
  std::mt19937_64 rng(22);
  const std::vector<float> xv = random_values(rng, batch * in),
                           yv = random_values(rng, batch * out);
  auto build = [&](Context& ctx, engine::Sequential& net) {
    net.add<engine::Linear>(ctx, in, 6);
    net.add<engine::ReLU>();
    net.add<engine::Linear>(ctx, 6, out);
  };
  Context ctx_a(Device::CPU, "cpu", 9), ctx_b(Device::CPU, "cpu", 9);
  engine::Sequential net_a, net_b;
  build(ctx_a, net_a);
  build(ctx_b, net_b);
  const Tensor x = Tensor::from_host(Device::CPU, batch, in, xv);
  const Tensor y = Tensor::from_host(Device::CPU, batch, out, yv);

  engine::Trainer trainer(ctx_a, net_a, options_for(Loss::MeanSquaredError, batch));
  trainer.step(x, y);
  const double reported = trainer.take_metrics().mean_loss();

  net_b.set_accumulate_grads(false);
  net_b.prepare(ctx_b, batch, in);
  engine::Sgd sgd(ctx_b, net_b.parameters(), engine::SgdOptions{});
  const std::vector<float> p = net_b.forward(ctx_b, x).download();
  std::vector<float> grad(p.size());
  double expected = 0.0;
  const float scale = 2.0f / static_cast<float>(batch * out);
  for (size_t i = 0; i < p.size(); ++i) {
    grad[i] = (p[i] - yv[i]) * scale;
    expected += static_cast<double>(p[i] - yv[i]) * (p[i] - yv[i]) / (batch * out);
  }
  net_b.backward(ctx_b, Tensor::from_host(Device::CPU, batch, out, grad));
  sgd.step(ctx_b);

  EXPECT_NEAR(reported, expected, 1e-6);
  for (size_t i = 0; i < net_a.parameters().size(); ++i)
    EXPECT_EQ(net_a.parameters()[i]->value.download(), net_b.parameters()[i]->value.download())
        << net_a.parameters()[i]->name;
}

TEST(Trainer, OutputWidthComesFromTheNetwork) {
  Context ctx(Device::CPU, "cpu", 1);
  engine::Sequential classifier;
  classifier.add<engine::Linear>(ctx, 3, 8);
  classifier.add<engine::ReLU>();
  classifier.add<engine::Linear>(ctx, 8, 5);
  engine::Trainer trainer(ctx, classifier, options_for(Loss::CrossEntropy, 4));
  EXPECT_EQ(trainer.outputs(), 5);
  EXPECT_EQ(trainer.loss(), Loss::CrossEntropy);

  engine::Sequential one_output;
  one_output.add<engine::Linear>(ctx, 3, 1);
  EXPECT_THROW_WITH(engine::Trainer(ctx, one_output, options_for(Loss::CrossEntropy, 4)),
                    gemm_mlp::Error, "cross-entropy needs a network of >= 2 outputs");
  engine::Trainer regression(ctx, one_output, options_for(Loss::MeanSquaredError, 4));
  EXPECT_EQ(regression.outputs(), 1);

  engine::Sequential any;
  any.add<engine::Linear>(ctx, 3, 2);
  EXPECT_THROW_WITH(engine::Trainer(ctx, any, options_for(Loss::CrossEntropy, 0)), gemm_mlp::Error,
                    "max_batch must be >= 1, got 0");
  EXPECT_THROW_WITH(engine::Trainer(ctx, any, options_for(static_cast<Loss>(7), 4)),
                    gemm_mlp::Error, "unknown loss 7");
}

// Labels given to a regression, or float targets to a classifier, are an error naming both.
TEST(Trainer, EachLossTakesItsOwnTargets) {
  Context ctx(Device::CPU, "cpu", 1);
  engine::Sequential a, b;
  a.add<engine::Linear>(ctx, 2, 3);
  b.add<engine::Linear>(ctx, 2, 3);
  engine::Trainer classifier(ctx, a, options_for(Loss::CrossEntropy, 4));
  engine::Trainer regression(ctx, b, options_for(Loss::MeanSquaredError, 4));
  const Tensor x(Device::CPU, 4, 2), targets(Device::CPU, 4, 3);
  const engine::LabelTensor labels(Device::CPU, {0, 1, 2, 0});

  EXPECT_THROW_WITH(classifier.step(x, targets), gemm_mlp::Error,
                    "step(x, targets) is for the mean squared error loss, but this trainer was "
                    "built with cross-entropy, which takes labels");
  EXPECT_THROW_WITH(classifier.evaluate(x, targets), gemm_mlp::Error,
                    "evaluate(x, targets) is for the mean squared error loss");
  EXPECT_THROW_WITH(regression.step(x, labels), gemm_mlp::Error,
                    "step(x, labels) is for the cross-entropy loss, but this trainer was built "
                    "with mean squared error, which takes float targets");
  EXPECT_THROW_WITH(regression.evaluate(x, labels), gemm_mlp::Error,
                    "evaluate(x, labels) is for the cross-entropy loss");
  EXPECT_EQ(classifier.steps(), 0);
  EXPECT_EQ(regression.steps(), 0);
}

TEST(Trainer, MeanSquaredErrorTargetsMustFitTheBatch) {
  Context ctx(Device::CPU, "cpu", 1);
  engine::Sequential net;
  net.add<engine::Linear>(ctx, 2, 3);
  engine::Trainer trainer(ctx, net, options_for(Loss::MeanSquaredError, 4));
  const Tensor x(Device::CPU, 4, 2);
  EXPECT_THROW_WITH(trainer.step(x, Tensor(Device::CPU, 4, 2)), gemm_mlp::Error,
                    "targets are 4x2 for a batch of 4 rows and a network of 3 outputs");
  EXPECT_THROW_WITH(trainer.step(x, Tensor(Device::CPU, 3, 3)), gemm_mlp::Error,
                    "targets are 3x3 for a batch of 4 rows");
  EXPECT_THROW_WITH(trainer.step(x, Tensor()), gemm_mlp::Error, "targets are 0x0");
  EXPECT_THROW_WITH(trainer.evaluate(x, Tensor(Device::CPU, 5, 3)), gemm_mlp::Error,
                    "evaluate got 4 rows and 5 rows of targets");
  EXPECT_THROW_WITH(trainer.evaluate(x, Tensor(Device::CPU, 4, 1)), gemm_mlp::Error,
                    "evaluate got targets of 4x1 for a network of 3 outputs");
  EXPECT_EQ(trainer.steps(), 0);
  // More rows than the batch: the first B are used, as with labels.
  trainer.step(x, Tensor(Device::CPU, 6, 3));
  EXPECT_EQ(trainer.take_metrics().seen, 4);
}

// A target that is NaN or infinite is an error when the metrics are read, as a label out of range
// is for cross-entropy, not a NaN loss to find later.
TEST(Trainer, NonFiniteTargetsAreReported) {
  Context ctx(Device::CPU, "cpu", 1);
  engine::Sequential net;
  net.add<engine::Linear>(ctx, 2, 2);
  engine::Trainer trainer(ctx, net, options_for(Loss::MeanSquaredError, 4));
  const Tensor x(Device::CPU, 4, 2);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  trainer.step(x, Tensor::from_host(Device::CPU, 4, 2, {0, 1, nan, 0, 0, -inf, 2, 3}));
  EXPECT_THROW_WITH(trainer.take_metrics(), gemm_mlp::Error,
                    "loss: 2 target values were NaN or infinite, among the 4 examples seen since "
                    "the metrics were last read");
  EXPECT_THROW_WITH(
      trainer.evaluate(x, Tensor::from_host(Device::CPU, 4, 2, {nan, 0, 0, 0, 0, 0, 0, 0})),
      gemm_mlp::Error, "1 target values were NaN or infinite");
}

// What was seen is counted as seen: one NaN target in a batch used for 1000 steps is 1000 values
// among 4000 examples, each counted at every step that uses it.
TEST(Trainer, NonFiniteTargetsAreCountedAsSeen) {
  Context ctx(Device::CPU, "cpu", 1);
  engine::Sequential net;
  net.add<engine::Linear>(ctx, 1, 1);
  engine::Trainer trainer(ctx, net, options_for(Loss::MeanSquaredError, 4));
  const Tensor x = Tensor::from_host(Device::CPU, 4, 1, {0, 1, 2, 3});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor y = Tensor::from_host(Device::CPU, 4, 1, {1, nan, 3, 4});
  for (int i = 0; i < 1000; ++i) trainer.step(x, y);
  EXPECT_THROW_WITH(trainer.take_metrics(), gemm_mlp::Error,
                    "loss: 1000 target values were NaN or infinite, among the 4000 examples seen "
                    "since the metrics were last read (a value counts at every step that uses "
                    "it); the regression's targets must be finite");
}

// On the CPU, inputs that are NaN or infinite are named as such when the metrics are read, not
// blamed on a learning rate too high.
TEST(Trainer, NonFiniteInputsAreNamedNotBlamedOnDivergence) {
  Context ctx(Device::CPU, "cpu", 1);
  engine::Sequential net;
  net.add<engine::Linear>(ctx, 2, 1);
  engine::Trainer trainer(ctx, net, options_for(Loss::MeanSquaredError, 2));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = Tensor::from_host(Device::CPU, 2, 2, {1, nan, 0, 1});
  const Tensor y = Tensor::from_host(Device::CPU, 2, 1, {1, 2});
  for (int i = 0; i < 3; ++i) trainer.step(x, y);
  try {
    trainer.take_metrics();
    ADD_FAILURE() << "no error";
  } catch (const engine::NonFiniteLoss& e) {
    ADD_FAILURE() << "blamed on divergence: " << e.what();
  } catch (const gemm_mlp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("loss: 3 input values were NaN or infinite, among the 6 "
                                         "examples seen since the metrics were last read"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find("learning rate"), std::string::npos) << e.what();
  }
}

// On the CPU too, each loss adds 1 to a step counter it is given (Trainer counts its steps so),
// and nothing without one.
TEST(Trainer, LossesCountTheStepWhenGivenACounter) {
  Context ctx(Device::CPU, 1);
  const Tensor z = Tensor::from_host(Device::CPU, 2, 3, {1, 2, 3, 4, 5, 6});
  const engine::LabelTensor labels(Device::CPU, std::vector<int32_t>{0, 2});
  engine::MetricCounters counters;
  int64_t steps = 41;
  engine::softmax_cross_entropy(ctx, z, labels, nullptr, &counters, nullptr, &steps);
  engine::mean_squared_error(ctx, z, z, nullptr, &counters, nullptr, &steps);
  engine::softmax_cross_entropy(ctx, z, labels, nullptr, &counters, nullptr);
  EXPECT_EQ(steps, 43);
}

// A loss that becomes NaN is an error naming the step (the metrics taken after every step), or
// the steps since they were last taken; train_mlp reports it the same way (exit 3).
TEST(Trainer, NonFiniteLossIsAnErrorNamingTheStep) {
  Context ctx(Device::CPU, "cpu", 1);
  engine::Sequential net;
  net.add<engine::Linear>(ctx, 2, 3);
  engine::Trainer trainer(ctx, net, options_for(Loss::CrossEntropy, 2));
  const engine::LabelTensor y(Device::CPU, std::vector<int32_t>{0, 2});
  const Tensor good = Tensor::from_host(Device::CPU, 2, 2, {1, 2, -1, 0.5f});
  trainer.step(good, y);
  EXPECT_TRUE(std::isfinite(trainer.take_metrics().loss_sum));
  // Finite inputs whose products overflow: the loss is NaN at step 2.
  trainer.step(Tensor::from_host(Device::CPU, 2, 2, {1, 3e38f, -1, 0.5f}), y);
  EXPECT_THROW_WITH(trainer.peek_metrics(), engine::NonFiniteLoss,
                    "trainer: the training loss became non-finite (NaN or infinite) in step 2; "
                    "the network diverged");
  try {
    trainer.take_metrics();
    ADD_FAILURE() << "no NonFiniteLoss";
  } catch (const engine::NonFiniteLoss& e) {
    EXPECT_EQ(e.first_step, 2);
    EXPECT_EQ(e.last_step, 2);
    // The CPU counts non-finite inputs (named instead): the rate alone is suspected.
    EXPECT_NE(std::string(e.what()).find("(try a smaller learning rate)"), std::string::npos)
        << e.what();
  }
  trainer.step(good, y);  // the parameters are NaN now: steps 3 and 4 too
  trainer.step(good, y);
  EXPECT_THROW_WITH(trainer.take_metrics(), gemm_mlp::Error,
                    "in steps 3 to 4 (the steps since the metrics were last taken");
}

// predict: the outputs of a whole set, in batches of max_batch, into a vector the caller keeps:
// x·Wᵀ + b, as the parameters say.
TEST(Trainer, PredictReturnsTheOutputsInTheCallersMemory) {
  const int in = 3, out = 2, n = 10;
  Context ctx(Device::CPU, "cpu", 5);
  engine::Sequential net;
  net.add<engine::Linear>(ctx, in, out);
  engine::Trainer trainer(ctx, net, options_for(Loss::MeanSquaredError, 4));  // 4 + 4 + 2 rows
  std::mt19937_64 rng(8);
  const std::vector<float> xv = random_values(rng, n * in);
  const Tensor x = Tensor::from_host(Device::CPU, n, in, xv);
  const std::vector<float> y = trainer.predict(x);
  ASSERT_EQ(y.size(), static_cast<size_t>(n * out));
  const auto params = net.parameters();
  const std::vector<float> w = params[0]->value.download(), b = params[1]->value.download();
  for (int r = 0; r < n; ++r)
    for (int o = 0; o < out; ++o) {
      double want = b[o];
      for (int i = 0; i < in; ++i) want += double(w[o * in + i]) * xv[r * in + i];
      EXPECT_NEAR(y[r * out + o], want, 1e-5) << r << "," << o;
    }
  EXPECT_THROW_WITH(trainer.predict(Tensor::from_host(Device::CPU, 2, 4, std::vector<float>(8))),
                    gemm_mlp::Error, "predict got x of 2x4 for a network of 3 inputs");
}

}  // namespace
