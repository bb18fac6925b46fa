// Gradient checks of every op by central finite differences, on the CPU backend.
//
// For a scalar L(θ), the central difference (L(θ+h) − L(θ−h)) / 2h has two errors:
//  - truncation, h²/6 · L''': zero for Linear and ReLU (piecewise linear in each entry, and no
//    entry crosses a kink: inputs are kept at |x| ≥ 0.1 > h) and for the squared error
//    (quadratic), small for softmax (|L'''| ≲ 1);
//  - rounding: the op runs in float32, so each evaluation of L carries an error of about
//    eps32 · S, where S = Σ|terms| is the size of what L sums. Dividing by 2h makes that
//    eps32 · S / h.
// The loss itself is accumulated in double on the host from the op's float outputs, so only the
// op's own float rounding counts. The actual step is taken as (float)(θ+h) − (float)(θ−h), which
// removes the rounding of the perturbation. Hence tol = 8 · eps32 · S / h + h² (+ a 1e-6 floor).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "engine/engine.h"
#include "random_data.h"

namespace {

using engine::Context;
using engine::Device;
using engine::Tensor;

constexpr double kEps32 = std::numeric_limits<float>::epsilon();

// Values in ±[0.1, 1]: away from ReLU's kink at 0.
std::vector<float> away_from_zero(std::mt19937_64& rng, size_t n) {
  std::vector<float> v = random_values(rng, n, 0.1f, 1.0f);
  std::bernoulli_distribution sign(0.5);
  for (float& x : v) x = sign(rng) ? x : -x;
  return v;
}

struct LossValue {
  double value;
  double scale;  // S = Σ|terms|
};

// Checks d L / d θ[i] against `analytic` for every entry of θ (a host copy of a CPU tensor that
// `loss` reads through `theta`).
void check_gradient(Tensor& theta, const std::vector<float>& analytic, double h,
                    const std::function<LossValue()>& loss, const char* what) {
  ASSERT_EQ(static_cast<int64_t>(analytic.size()), theta.size()) << what;
  float* t = theta.data();
  for (int64_t i = 0; i < theta.size(); ++i) {
    const float saved = t[i];
    const float plus = static_cast<float>(saved + h), minus = static_cast<float>(saved - h);
    t[i] = plus;
    const LossValue lp = loss();
    t[i] = minus;
    const LossValue lm = loss();
    t[i] = saved;
    const double step = static_cast<double>(plus) - static_cast<double>(minus);
    const double fd = (lp.value - lm.value) / step;
    const double tol = 8 * kEps32 * std::max(lp.scale, lm.scale) / h + h * h + 1e-6;
    EXPECT_NEAR(analytic[i], fd, tol) << what << "[" << i << "]";
  }
}

// L = Σ R ⊙ Y for a fixed random R: dL/dY = R.
LossValue weighted_sum(const Tensor& y, const std::vector<float>& r) {
  LossValue l{0.0, 0.0};
  for (int64_t i = 0; i < y.size(); ++i) {
    l.value += static_cast<double>(r[i]) * y.data()[i];
    l.scale += std::fabs(static_cast<double>(r[i]) * y.data()[i]);
  }
  return l;
}

TEST(GradCheck, LinearInputWeightAndBias) {
  Context ctx(Device::CPU, "cpu", 1);
  std::mt19937_64 rng(11);
  const int batch = 5, in = 7, out = 4;
  Tensor x = Tensor::from_host(Device::CPU, batch, in, random_values(rng, batch * in, -1, 1));
  Tensor w = Tensor::from_host(Device::CPU, out, in, random_values(rng, out * in, -1, 1));
  Tensor b = Tensor::from_host(Device::CPU, 1, out, random_values(rng, out, -1, 1));
  const std::vector<float> r = random_values(rng, batch * out, -1, 1);
  Tensor y(Device::CPU, batch, out), dy = Tensor::from_host(Device::CPU, batch, out, r);
  Tensor dx(Device::CPU, batch, in), dw(Device::CPU, out, in), db(Device::CPU, 1, out);

  engine::linear_backward(ctx, x, w, dy, &dx, dw, db);
  const auto loss = [&] {
    engine::linear_forward(ctx, x, w, b, y);
    return weighted_sum(y, r);
  };
  const double h = 1e-2;
  check_gradient(x, dx.download(), h, loss, "dX");
  check_gradient(w, dw.download(), h, loss, "dW");
  check_gradient(b, db.download(), h, loss, "db");
}

TEST(GradCheck, LinearWeightGradientsAccumulateOrOverwrite) {
  // dW and db use beta = 1: a second backward adds the same gradient again.
  Context ctx(Device::CPU, "cpu", 1);
  std::mt19937_64 rng(12);
  Tensor x = Tensor::from_host(Device::CPU, 3, 2, random_values(rng, 6, -1, 1));
  Tensor w = Tensor::from_host(Device::CPU, 4, 2, random_values(rng, 8, -1, 1));
  Tensor dy = Tensor::from_host(Device::CPU, 3, 4, random_values(rng, 12, -1, 1));
  Tensor dw(Device::CPU, 4, 2), db(Device::CPU, 1, 4);
  engine::linear_backward(ctx, x, w, dy, nullptr, dw, db);
  const std::vector<float> once_w = dw.download(), once_b = db.download();
  engine::linear_backward(ctx, x, w, dy, nullptr, dw, db);
  const std::vector<float> twice_w = dw.download(), twice_b = db.download();
  for (size_t i = 0; i < once_w.size(); ++i) EXPECT_FLOAT_EQ(twice_w[i], 2 * once_w[i]);
  for (size_t i = 0; i < once_b.size(); ++i) EXPECT_FLOAT_EQ(twice_b[i], 2 * once_b[i]);
  // accumulate = false (what engine::Trainer uses): beta = 0, so the stale gradient is ignored.
  engine::linear_backward(ctx, x, w, dy, nullptr, dw, db, {/*accumulate=*/false, false});
  EXPECT_EQ(dw.download(), once_w);
  EXPECT_EQ(db.download(), once_b);
}

TEST(GradCheck, ReLU) {
  Context ctx(Device::CPU, "cpu", 1);
  std::mt19937_64 rng(13);
  const int rows = 6, cols = 5;
  Tensor x = Tensor::from_host(Device::CPU, rows, cols, away_from_zero(rng, rows * cols));
  const std::vector<float> r = random_values(rng, rows * cols, -1, 1);
  Tensor y(Device::CPU, rows, cols), dx(Device::CPU, rows, cols);
  Tensor dy = Tensor::from_host(Device::CPU, rows, cols, r);
  engine::relu_forward(ctx, x, y);
  engine::relu_backward(ctx, y, dy, dx);
  check_gradient(
      x, dx.download(), 1e-2,
      [&] {
        engine::relu_forward(ctx, x, y);
        return weighted_sum(y, r);
      },
      "dX");
}

// Linear → ReLU → Linear as Sequential fuses it (bias + ReLU in the first GEMM's epilogue, the
// ReLU mask in the second layer's dx GEMM), against finite differences of the whole network, and
// bit for bit against the same network unfused.
TEST(GradCheck, FusedLinearReluPair) {
  Context ctx(Device::CPU, "cpu", 1);
  std::mt19937_64 rng(16);
  const int batch = 5, in = 6, hidden = 7, out = 4;
  auto build = [&](engine::Sequential& net, bool fuse) {
    net.add<engine::Linear>(ctx, in, hidden);
    net.add<engine::ReLU>();
    net.add<engine::Linear>(ctx, hidden, out);
    net.set_needs_input_grad(true);
    net.set_accumulate_grads(false);
    net.set_fusion(fuse);
    net.prepare(ctx, batch);
  };
  engine::Sequential fused, plain;
  build(fused, true);
  build(plain, false);
  std::vector<engine::Parameter*> pf = fused.parameters(), pp = plain.parameters();
  for (size_t i = 0; i < pf.size(); ++i) pp[i]->value.copy_from(pf[i]->value);

  Tensor x = Tensor::from_host(Device::CPU, batch, in, random_values(rng, batch * in, -1, 1));
  const std::vector<float> r = random_values(rng, batch * out, -1, 1);
  const Tensor dy = Tensor::from_host(Device::CPU, batch, out, r);
  const std::vector<float> y_fused = fused.forward(ctx, x).download();
  const std::vector<float> dx = fused.backward(ctx, dy).download();
  EXPECT_EQ(y_fused, plain.forward(ctx, x).download());
  EXPECT_EQ(dx, plain.backward(ctx, dy).download());
  for (size_t i = 0; i < pf.size(); ++i)
    EXPECT_EQ(pf[i]->grad.download(), pp[i]->grad.download()) << pf[i]->name;

  const auto loss = [&] { return weighted_sum(fused.forward(ctx, x), r); };
  const double h = 1e-3;
  check_gradient(x, dx, h, loss, "dX");
  for (engine::Parameter* p : pf) {
    const std::vector<float> g = p->grad.download();
    check_gradient(p->value, g, h, loss, p->name.c_str());
  }
}

// Mean cross-entropy of float logits, in double.
LossValue mean_cross_entropy(const Tensor& logits, const std::vector<int32_t>& labels) {
  const int rows = logits.rows(), classes = logits.cols();
  LossValue l{0.0, 0.0};
  for (int r = 0; r < rows; ++r) {
    const float* z = logits.data() + static_cast<int64_t>(r) * classes;
    double m = z[0];
    for (int j = 1; j < classes; ++j) m = std::max(m, static_cast<double>(z[j]));
    double sum = 0.0;
    for (int j = 0; j < classes; ++j) sum += std::exp(z[j] - m);
    const double row = std::log(sum) + m - z[labels[r]];
    l.value += row / rows;
    l.scale += (std::fabs(row) + std::fabs(m)) / rows;
  }
  return l;
}

TEST(GradCheck, SoftmaxCrossEntropy) {
  Context ctx(Device::CPU, "cpu", 1);
  std::mt19937_64 rng(14);
  const int rows = 7, classes = 5;
  Tensor logits =
      Tensor::from_host(Device::CPU, rows, classes, random_values(rng, rows * classes, -3, 3));
  const std::vector<int32_t> labels = {0, 4, 2, 2, 1, 3, 0};
  Tensor dlogits(Device::CPU, rows, classes);
  engine::MetricCounters counters{};
  engine::softmax_cross_entropy(ctx, logits, engine::LabelTensor(Device::CPU, labels), &dlogits,
                                &counters, nullptr);  // the CPU needs no scratch

  // The loss the op reports matches the double-precision one.
  EXPECT_EQ(counters.seen, static_cast<unsigned long long>(rows));
  EXPECT_NEAR(counters.loss_sum / rows, mean_cross_entropy(logits, labels).value, 1e-5);

  check_gradient(
      logits, dlogits.download(), 1e-2, [&] { return mean_cross_entropy(logits, labels); },
      "dLogits");
}

// Mean squared error of float predictions against targets, over all elements, in double.
LossValue mean_squared_error(const Tensor& predictions, const std::vector<float>& targets) {
  const int64_t n = predictions.size();
  LossValue l{0.0, 0.0};
  for (int64_t i = 0; i < n; ++i) {
    const double diff = static_cast<double>(predictions.data()[i]) - targets[i];
    l.value += diff * diff / static_cast<double>(n);
  }
  l.scale = l.value;
  return l;
}

TEST(GradCheck, MeanSquaredError) {
  Context ctx(Device::CPU, "cpu", 1);
  std::mt19937_64 rng(15);
  const int rows = 7, cols = 3;
  Tensor predictions =
      Tensor::from_host(Device::CPU, rows, cols, random_values(rng, rows * cols, -2, 2));
  const std::vector<float> targets = random_values(rng, rows * cols, -2, 2);
  Tensor dpredictions(Device::CPU, rows, cols);
  engine::MetricCounters counters{};
  engine::mean_squared_error(ctx, predictions, Tensor::from_host(Device::CPU, rows, cols, targets),
                             &dpredictions, &counters, nullptr);

  // The loss the op reports (a sum of per-row means) matches the double-precision one.
  EXPECT_EQ(counters.seen, static_cast<unsigned long long>(rows));
  EXPECT_EQ(counters.correct, 0u);
  EXPECT_NEAR(counters.loss_sum / rows, mean_squared_error(predictions, targets).value, 1e-6);

  check_gradient(
      predictions, dpredictions.download(), 1e-2,
      [&] { return mean_squared_error(predictions, targets); }, "dPredictions");
}

TEST(GradCheck, SoftmaxIsStableForHugeLogits) {
  Context ctx(Device::CPU, "cpu", 1);
  Tensor logits = Tensor::from_host(Device::CPU, 1, 3, {1000.0f, 999.0f, -1000.0f});
  Tensor d(Device::CPU, 1, 3);
  engine::MetricCounters counters{};
  engine::softmax_cross_entropy(ctx, logits, engine::LabelTensor(Device::CPU, {1}), &d, &counters,
                                nullptr);
  // softmax = (e/(e+1), 1/(e+1), 0): loss = log(1 + e).
  EXPECT_NEAR(counters.loss_sum, std::log1p(std::exp(1.0)), 1e-5);
  EXPECT_EQ(counters.correct, 0u);
  const std::vector<float> g = d.download();
  EXPECT_NEAR(g[0], std::exp(1.0) / (std::exp(1.0) + 1), 1e-6);
  EXPECT_NEAR(g[1], 1 / (std::exp(1.0) + 1) - 1, 1e-6);
  EXPECT_EQ(g[2], 0.0f);
}

}  // namespace
