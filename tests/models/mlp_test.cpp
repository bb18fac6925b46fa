// The MLP: gradient check of the whole loss w.r.t. every parameter (CPU), and the CUDA backend
// against the CPU backend for every device GEMM variant (forward, loss, every gradient, one step).
#include "models/mlp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "engine/compare_to_cpu.h"  // tests/engine/
#include "engine/engine.h"
#include "expect_error.h"
#include "gpu_test.h"
#include "random_data.h"

namespace {

using engine::Context;
using engine::Device;
using engine::Tensor;

TEST(Mlp, LayerSizesAndParameters) {
  Context ctx(Device::CPU, "cpu", 1);
  models::MLP mlp(ctx, 784, {1024, 1024}, 10);
  EXPECT_EQ(mlp.layer_sizes(), "784-1024-1024-10");
  EXPECT_EQ(mlp.parameter_count(), 784 * 1024 + 1024 + 1024 * 1024 + 1024 + 1024 * 10 + 10);
  EXPECT_EQ(mlp.size(), 5u);
  EXPECT_THROW(models::MLP(ctx, 784, {0}, 10), gemm_mlp::Error);
  EXPECT_THROW(models::MLP(ctx, 784, {}, 1), gemm_mlp::Error);
  models::MLP linear_only(ctx, 3, {}, 2);  // no hidden layer: logistic regression
  EXPECT_EQ(linear_only.size(), 1u);
}

// A checkpoint's header as a PyTorch state_dict of nn.Sequential(Linear, ReLU, ...) has it.
engine::safetensors::Header mlp_header(
    const std::vector<std::pair<std::string, std::vector<int64_t>>>& tensors,
    const engine::Metadata& metadata = {}) {
  engine::safetensors::Header h;
  h.metadata = metadata;
  for (const auto& [name, shape] : tensors) {
    uint64_t bytes = 4;
    for (int64_t d : shape) bytes *= static_cast<uint64_t>(d);
    h.tensors.push_back({name, shape, h.data_bytes, h.data_bytes + bytes});
    h.data_bytes += bytes;
  }
  std::sort(h.tensors.begin(), h.tensors.end(),  // as read_header gives them
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return h;
}

TEST(MlpSizes, FromTheTensorsNamesAndShapes) {
  const auto sizes = models::mlp_sizes("m", mlp_header({{"0.weight", {16, 784}},
                                                        {"0.bias", {16}},
                                                        {"2.weight", {8, 16}},
                                                        {"2.bias", {1, 8}},
                                                        {"4.weight", {10, 8}},
                                                        {"4.bias", {10}}}));
  EXPECT_EQ(sizes.inputs, 784);
  EXPECT_EQ(sizes.hidden, (std::vector<int>{16, 8}));
  EXPECT_EQ(sizes.classes, 10);
  EXPECT_EQ(sizes.text(), "784-16-8-10");
  const auto linear = models::mlp_sizes("m", mlp_header({{"0.weight", {10, 784}}, {"0.bias", {10}}},
                                                        {{"layers", "784-10"}, {"hidden", ""}}));
  EXPECT_EQ(linear.text(), "784-10");  // no hidden layer: logistic regression
}

// What does not fit is named: the tensor, its shape and what was expected; or the key.
TEST(MlpSizes, WhatDoesNotFitIsNamed) {
  using T = std::vector<std::pair<std::string, std::vector<int64_t>>>;
  const T good = {
      {"0.weight", {16, 784}}, {"0.bias", {16}}, {"2.weight", {10, 16}}, {"2.bias", {10}}};
  const auto fails = [](const T& tensors, const std::string& text, const engine::Metadata& m = {}) {
    EXPECT_THROW_WITH(models::mlp_sizes("m.safetensors", mlp_header(tensors, m)), gemm_mlp::Error,
                      "checkpoint m.safetensors: " + text);
  };
  fails({{"0.weight", {16, 784}}, {"0.bias", {16}}, {"2.weight", {10, 20}}, {"2.bias", {10}}},
        "tensor '2.weight' has shape [10,20], expected [10,16]: its inputs are the 16 outputs of "
        "'0.weight'");
  fails({{"0.weight", {16, 784}}, {"0.bias", {15}}, {"2.weight", {10, 16}}, {"2.bias", {10}}},
        "tensor '0.bias' has shape [15], expected [16]");
  fails({{"0.weight", {16, 784}}, {"2.weight", {10, 16}}, {"2.bias", {10}}},
        "tensor '0.weight' has no '0.bias'");
  fails({{"0.bias", {16}}}, "tensor '0.bias' has no '0.weight'");
  fails({{"0.weight", {16, 784, 1}}, {"0.bias", {16}}},
        "tensor '0.weight' has shape [16,784,1], expected [outputs, inputs]");
  T gap = good;
  gap.push_back({"6.weight", {10, 10}});
  gap.push_back({"6.bias", {10}});
  fails(gap, "tensor '6.bias' [10] does not fit an MLP (a gap: no '4.weight' before it)");
  fails({{"0.weight", {16, 784}}, {"0.bias", {16}}, {"1.weight", {10, 16}}, {"1.bias", {10}}},
        "tensor '1.bias' [10] does not fit an MLP (index 1 is a ReLU's, which has no parameters)");
  T extra = good;
  extra.push_back({"scale", {1}});
  fails(extra, "tensor 'scale' [1] does not fit an MLP (it is no Linear layer's weight or bias)");
  fails({{"0.weight", {1, 784}}, {"0.bias", {1}}},
        "tensor '0.weight' gives 1 output; a classifier needs at least 2");
  fails({}, "holds no tensors");
  // Metadata that disagrees with the tensors: a 51 KB file claiming 100000-wide layers.
  fails(good, "metadata 'hidden' is '100000,100000', but the tensors give hidden '16' (784-16-10)",
        {{"hidden", "100000,100000"}});
  fails(good, "metadata 'layers' is '784-32-10', but the tensors give 784-16-10",
        {{"layers", "784-32-10"}});
  EXPECT_EQ(
      models::mlp_sizes("m", mlp_header(good, {{"layers", "784-16-10"}, {"hidden", "16"}})).text(),
      "784-16-10");
}

// Tensors larger than the machine can hold are refused from the header, before any allocation.
TEST(MlpSizes, SizesBeyondMemoryAreRefusedFromTheHeader) {
  auto h = mlp_header({{"0.weight", {1 << 20, 784}}, {"0.bias", {1 << 20}}});
  h.tensors.push_back({"2.weight", {1 << 20, 1 << 20}, h.data_bytes, h.data_bytes + (4ull << 40)});
  h.data_bytes += 4ull << 40;
  h.tensors.push_back({"2.bias", {1 << 20}, h.data_bytes, h.data_bytes + (4 << 20)});
  h.data_bytes += 4 << 20;
  EXPECT_THROW_WITH(models::mlp_sizes("big.safetensors", h), gemm_mlp::Error,
                    "checkpoint big.safetensors: its tensors (twice 4.0 TiB (");
}

// The loss of the whole network by central differences, w.r.t. every parameter of a 6-5-4-3 MLP.
// The forward runs in float; the loss is then accumulated in double. Its rounding error is about
// eps32 · S with S ≈ Σ|logits| + Σ|row losses| (what the float forward produced); dividing by the
// step gives eps32·S/h. Truncation (h²·L'''/6) is small for h = 1e-2 since L is smooth between
// ReLU kinks; an entry whose ± steps change any ReLU's on/off pattern crosses a kink, where the
// central difference means nothing, and is skipped (few are).
TEST(Mlp, GradientCheckEveryParameter) {
  Context ctx(Device::CPU, "cpu", 3);
  const int batch = 7, inputs = 6, classes = 3;
  models::MLP mlp(ctx, inputs, {5, 4}, classes);
  mlp.prepare(ctx, batch);
  std::mt19937_64 rng(4);
  Tensor x = Tensor::from_host(Device::CPU, batch, inputs, random_values(rng, batch * inputs));
  const std::vector<int32_t> labels = random_labels(rng, batch, classes);

  // Loss in double, plus the on/off pattern of every ReLU output.
  struct Eval {
    double loss, scale;
    std::vector<bool> pattern;
  };
  const auto evaluate = [&] {
    Eval e{0.0, 0.0, {}};
    const Tensor* h = &x;
    for (size_t i = 0; i < mlp.size(); ++i) {
      h = &mlp[i].forward(ctx, *h);
      if (i + 1 < mlp.size() && i % 2 == 1)
        for (int64_t j = 0; j < h->size(); ++j) e.pattern.push_back(h->data()[j] > 0.0f);
    }
    for (int r = 0; r < batch; ++r) {
      const float* z = h->data() + r * classes;
      double m = z[0], sum = 0.0, zsum = 0.0;
      for (int j = 1; j < classes; ++j) m = std::max(m, static_cast<double>(z[j]));
      for (int j = 0; j < classes; ++j) sum += std::exp(z[j] - m), zsum += std::fabs(z[j]);
      const double row = std::log(sum) + m - z[labels[r]];
      e.loss += row / batch;
      e.scale += (std::fabs(row) + zsum) / batch;
    }
    return e;
  };

  // Analytic gradients from the engine.
  engine::SoftmaxCrossEntropy loss;
  loss.prepare(ctx, batch, classes);
  engine::Metrics metrics(ctx);
  mlp.zero_grad(ctx);
  const engine::LabelTensor y(ctx.device(), labels);
  mlp.backward(ctx, loss.forward_backward(ctx, mlp.forward(ctx, x), y, metrics));

  const double h = 1e-2, eps32 = std::numeric_limits<float>::epsilon();
  int checked = 0, skipped = 0;
  for (engine::Parameter* p : mlp.parameters()) {
    const std::vector<float> analytic = p->grad.download();
    float* v = p->value.data();
    for (int64_t i = 0; i < p->value.size(); ++i) {
      const float saved = v[i];
      const float plus = static_cast<float>(saved + h), minus = static_cast<float>(saved - h);
      v[i] = plus;
      const Eval ep = evaluate();
      v[i] = minus;
      const Eval em = evaluate();
      v[i] = saved;
      if (ep.pattern != em.pattern) {
        ++skipped;
        continue;
      }
      const double fd = (ep.loss - em.loss) / (static_cast<double>(plus) - minus);
      const double tol = 8 * eps32 * std::max(ep.scale, em.scale) / h + h * h + 1e-6;
      EXPECT_NEAR(analytic[i], fd, tol) << p->name << "[" << i << "]";
      ++checked;
    }
  }
  EXPECT_EQ(checked + skipped, mlp.parameter_count());
  EXPECT_GT(checked, 0.9 * mlp.parameter_count()) << skipped << " entries crossed a ReLU kink";
}

// ---------------------------------------------------------------------------------------------
// GPU against CPU

// ‖got − ref‖₂ ≤ tol · ‖ref‖₂; NaN never passes. For TF32 gradients, whose per-entry error is
// chance: TF32's ~1e-3 error in the forward pass flips the ReLU mask of pre-activations that close
// to zero, which changes the gradient entries upstream of them by as much as their own size.
// Truncating only the CPU model's weights and inputs to TF32 moves its first layer's gradient by
// several percent of the largest entry, less in norm; hence a norm bound for these.
void expect_close_norm(const std::vector<float>& got, const std::vector<float>& ref, double tol,
                       const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  double diff = 0.0, norm = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_FALSE(std::isnan(got[i])) << what << "[" << i << "] is NaN";
    const double d = static_cast<double>(got[i]) - ref[i];
    diff += d * d;
    norm += static_cast<double>(ref[i]) * ref[i];
  }
  EXPECT_LE(std::sqrt(diff), tol * std::sqrt(norm) + 1e-7) << what;
}

struct Snapshot {
  std::vector<float> logits, dlogits;
  std::vector<std::vector<float>> grads, stepped;
  double loss_sum = 0.0;
};

// Builds the MLP on `ctx`, overwrites its weights with `weights` (from the CPU model), runs one
// training step on (xv, labels) and records everything along the way.
Snapshot run_step(Context& ctx, int batch, int inputs, const std::vector<int>& hidden, int classes,
                  const std::vector<std::vector<float>>& weights, const std::vector<float>& xv,
                  const std::vector<int32_t>& labels) {
  models::MLP mlp(ctx, inputs, hidden, classes);
  const std::vector<engine::Parameter*> params = mlp.parameters();
  for (size_t i = 0; i < params.size(); ++i) params[i]->value.upload(weights[i], ctx.stream());
  mlp.prepare(ctx, 64);
  engine::SoftmaxCrossEntropy loss;
  loss.prepare(ctx, 64, classes);
  engine::Metrics metrics(ctx);
  const engine::LabelTensor y(ctx.device(), labels);
  Tensor x = Tensor::from_host(ctx.device(), batch, inputs, xv);
  engine::Sgd sgd(ctx, params, {0.1f, 0.9f, 1e-4f});

  Snapshot s;
  mlp.zero_grad(ctx);
  const Tensor& logits = mlp.forward(ctx, x);
  s.logits = logits.download(ctx.stream());
  const Tensor& dlogits = loss.forward_backward(ctx, logits, y, metrics);
  s.dlogits = dlogits.download(ctx.stream());
  mlp.backward(ctx, dlogits);
  for (engine::Parameter* p : params) s.grads.push_back(p->grad.download(ctx.stream()));
  sgd.step(ctx);
  for (engine::Parameter* p : params) s.stepped.push_back(p->value.download(ctx.stream()));
  s.loss_sum = metrics.read(ctx).loss_sum;
  return s;
}

TEST(MlpGpu, EveryDeviceVariantMatchesCpu) {
  GPU_TEST_OR_SKIP();
  const int inputs = 50, classes = 10;
  const std::vector<int> hidden = {100, 70};
  for (int batch : {37, 64}) {
    std::mt19937_64 rng(batch);
    const std::vector<float> xv = random_values(rng, batch * inputs);
    const std::vector<int32_t> labels = random_labels(rng, batch, classes);

    Context cpu(Device::CPU, "cpu", 11);
    std::vector<std::vector<float>> weights;
    {
      models::MLP init(cpu, inputs, hidden, classes);
      for (engine::Parameter* p : init.parameters()) weights.push_back(p->value.download());
    }
    const Snapshot ref = run_step(cpu, batch, inputs, hidden, classes, weights, xv, labels);

    for (const gemm::Variant& v : gemm::variants()) {
      if (v.device != Device::CUDA) continue;
      SCOPED_TRACE(std::string(v.name) + ", batch " + std::to_string(batch));
      const double tol = tolerance_against_cpu(v);
      Context ctx(Device::CUDA, v, 11);
      Snapshot got;
      try {
        got = run_step(ctx, batch, inputs, hidden, classes, weights, xv, labels);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "variant " << v.name << " threw: " << e.what();
        continue;  // the other variants are still checked
      }
      expect_close(got.logits, ref.logits, tol, "logits");
      expect_close(got.dlogits, ref.dlogits, tol, "dlogits");
      EXPECT_NEAR(got.loss_sum, ref.loss_sum, tol * ref.loss_sum);
      for (size_t i = 0; i < ref.grads.size(); ++i) {
        if (v.precision == gemm::Precision::TF32)
          expect_close_norm(got.grads[i], ref.grads[i], 5e-2, "grad " + std::to_string(i));
        else
          expect_close(got.grads[i], ref.grads[i], tol, "grad " + std::to_string(i));
        expect_close(got.stepped[i], ref.stepped[i], tol, "stepped " + std::to_string(i));
      }
    }
  }
}

}  // namespace
