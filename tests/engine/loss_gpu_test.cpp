// The loss kernels (kernels_loss.cu: softmax_xent_kernel, squared_error_kernel) against the host
// loops, through the ops, over shapes that cross the kernels' boundaries: one row, fewer rows than
// a block's warps, a block's multiple ± 1, and more rows than kLossMaxBlocks blocks take in one
// pass (the grid strides); widths below, at and past a warp and past the registers' cache of 256
// classes. Bad labels and ties for the maximum are mixed in. Each result is checked for
// reproducibility (a second run gives the same bits) and against a captured CUDA graph.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "expect_error.h"
#include "gpu_test.h"
#include "random_data.h"

namespace {

using engine::Context;
using engine::ContextValue;
using engine::Device;
using engine::LabelTensor;
using engine::LossScratch;
using engine::MetricCounters;
using engine::Tensor;

// 10000 rows: more than kLossMaxBlocks (1024) blocks of 8 rows, so warps take a second row.
const std::vector<int> kRows = {1, 7, 255, 256, 257, 1000, 4097, 10000};
// 256 | 257: the widest row the softmax kernel keeps in registers | the narrowest it reads twice.
const std::vector<int> kClasses = {2, 10, 31, 32, 33, 100, 256, 257, 1000};
const std::vector<int> kCols = {1, 2, 10, 31, 32, 33, 100, 257, 1000};  // mean squared error

std::string shape_name(int rows, int cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

// Logits in (−4, 4). Every third row holds its maximum twice (columns 0 and classes − 1) with the
// label on one of them, so that the arg-max's tie-breaking (the first maximum) shows in `correct`;
// every eleventh label is out of range (−1 or classes).
struct XentCase {
  std::vector<float> logits;
  std::vector<int32_t> labels;
  unsigned long long bad_labels = 0;
};

XentCase xent_case(int rows, int classes) {
  std::mt19937_64 rng(1000003ull * rows + classes);
  XentCase c{random_values(rng, static_cast<size_t>(rows) * classes, -4, 4),
             random_labels(rng, rows, classes)};
  for (int r = 0; r < rows; ++r) {
    float* z = c.logits.data() + static_cast<int64_t>(r) * classes;
    if (r % 3 == 0) {
      z[0] = z[classes - 1] = 5.0f;
      c.labels[r] = r % 2 == 0 ? 0 : classes - 1;
    }
    if (r % 11 == 5) {
      c.labels[r] = r % 2 == 0 ? -1 : classes;
      ++c.bad_labels;
    }
  }
  return c;
}

// Predictions and targets in (−3, 3).
struct SquaredErrorCase {
  std::vector<float> predictions, targets;
};

SquaredErrorCase squared_error_case(int rows, int cols) {
  std::mt19937_64 rng(2000003ull * rows + cols);
  const size_t n = static_cast<size_t>(rows) * cols;
  SquaredErrorCase c{random_values(rng, n, -3, 3), random_values(rng, n, -3, 3)};
  return c;
}

struct LossResult {
  MetricCounters counters;
  std::vector<float> grad;
};

LossResult host_xent(const XentCase& c, int rows, int classes) {
  Context cpu(Device::CPU, "cpu", 1);
  const Tensor z = Tensor::from_host(Device::CPU, rows, classes, c.logits);
  Tensor d(Device::CPU, rows, classes);
  MetricCounters counters{};
  engine::softmax_cross_entropy(cpu, z, LabelTensor(Device::CPU, c.labels), &d, &counters, nullptr);
  return {counters, d.download()};
}

LossResult host_squared_error(const SquaredErrorCase& c, int rows, int cols) {
  Context cpu(Device::CPU, "cpu", 1);
  const Tensor p = Tensor::from_host(Device::CPU, rows, cols, c.predictions);
  const Tensor t = Tensor::from_host(Device::CPU, rows, cols, c.targets);
  Tensor d(Device::CPU, rows, cols);
  MetricCounters counters{};
  engine::mean_squared_error(cpu, p, t, &d, &counters, nullptr);
  return {counters, d.download()};
}

// One cross-entropy problem on the GPU: inputs, gradient, counters and the kernel's scratch.
struct GpuXent {
  GpuXent(Context& ctx, const XentCase& c, int rows, int classes)
      : z(Tensor::from_host(Device::CUDA, rows, classes, c.logits)),
        d(Device::CUDA, rows, classes),
        labels(Device::CUDA, c.labels),
        counters(ctx),
        scratch(ctx) {}
  void run(Context& ctx) {
    engine::softmax_cross_entropy(ctx, z, labels, &d, counters.get(), scratch.get());
  }
  LossResult read(Context& ctx) const { return {counters.read(ctx), d.download(ctx.stream())}; }

  Tensor z, d;
  LabelTensor labels;
  ContextValue<MetricCounters> counters;
  ContextValue<LossScratch> scratch;
};

// The same for the mean squared error.
struct GpuSquaredError {
  GpuSquaredError(Context& ctx, const SquaredErrorCase& c, int rows, int cols)
      : p(Tensor::from_host(Device::CUDA, rows, cols, c.predictions)),
        t(Tensor::from_host(Device::CUDA, rows, cols, c.targets)),
        d(Device::CUDA, rows, cols),
        counters(ctx),
        scratch(ctx) {}
  void run(Context& ctx) {
    engine::mean_squared_error(ctx, p, t, &d, counters.get(), scratch.get());
  }
  LossResult read(Context& ctx) const { return {counters.read(ctx), d.download(ctx.stream())}; }

  Tensor p, t, d;
  ContextValue<MetricCounters> counters;
  ContextValue<LossScratch> scratch;
};

// Bit for bit: a second run, a graph replay.
void expect_same_bits(const LossResult& got, const LossResult& want) {
  EXPECT_EQ(got.counters.loss_sum, want.counters.loss_sum);
  EXPECT_EQ(got.counters.correct, want.counters.correct);
  EXPECT_EQ(got.counters.seen, want.counters.seen);
  EXPECT_EQ(got.counters.bad_labels, want.counters.bad_labels);
  EXPECT_EQ(got.counters.bad_targets, want.counters.bad_targets);
  EXPECT_EQ(got.grad, want.grad);
}

// The GPU's counters against the host's: counts exactly, the loss sum to rounding (the rows' terms
// are rounded alike, but summed in other orders).
void expect_counters_match(const MetricCounters& got, const MetricCounters& want) {
  EXPECT_EQ(got.seen, want.seen);
  EXPECT_EQ(got.correct, want.correct);
  EXPECT_EQ(got.bad_labels, want.bad_labels);
  EXPECT_EQ(got.bad_targets, want.bad_targets);
  EXPECT_NEAR(got.loss_sum, want.loss_sum, 1e-5 * std::fabs(want.loss_sum) + 1e-9);
}

// dlogits element by element: softmax/B to a few float roundings of the exps and of a sum in
// another order (2e-5 relative), and an absolute 1e-6/B where the one-hot cancels softmax ≈ 1.
void expect_dlogits_match(const std::vector<float>& got, const std::vector<float>& want, int rows) {
  ASSERT_EQ(got.size(), want.size());
  const double inv_batch = 1.0 / rows;
  size_t mismatches = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double tol = 2e-5 * std::fabs(want[i]) + 1e-6 * inv_batch;
    if (!(std::fabs(static_cast<double>(got[i]) - want[i]) <= tol)) {  // NaN fails too
      if (mismatches == 0) first = i;
      ++mismatches;
    }
  }
  EXPECT_EQ(mismatches, 0u) << "first at [" << first << "]: got " << got[first] << ", want "
                            << want[first];
}

TEST(EngineGpu, SoftmaxXentKernelMatchesHostForManyShapes) {
  GPU_TEST_OR_SKIP();
  Context ctx(Device::CUDA, "naive", 1);
  for (const int rows : kRows)
    for (const int classes : kClasses) {
      SCOPED_TRACE(shape_name(rows, classes));
      const XentCase c = xent_case(rows, classes);
      const LossResult want = host_xent(c, rows, classes);
      EXPECT_EQ(want.counters.bad_labels, c.bad_labels);

      GpuXent gpu(ctx, c, rows, classes);
      gpu.run(ctx);
      const LossResult got = gpu.read(ctx);
      expect_counters_match(got.counters, want.counters);
      expect_dlogits_match(got.grad, want.grad, rows);
      EXPECT_EQ(gpu.scratch.read(ctx).ticket, 0u) << "the last block resets the ticket";

      // A second run on zeroed counters: the same bits.
      gpu.counters.zero(ctx);
      gpu.run(ctx);
      expect_same_bits(gpu.read(ctx), got);
    }
}

TEST(EngineGpu, SquaredErrorKernelMatchesHostForManyShapes) {
  GPU_TEST_OR_SKIP();
  Context ctx(Device::CUDA, "naive", 1);
  for (const int rows : kRows)
    for (const int cols : kCols) {
      SCOPED_TRACE(shape_name(rows, cols));
      const SquaredErrorCase c = squared_error_case(rows, cols);
      const LossResult want = host_squared_error(c, rows, cols);

      GpuSquaredError gpu(ctx, c, rows, cols);
      gpu.run(ctx);
      const LossResult got = gpu.read(ctx);
      expect_counters_match(got.counters, want.counters);
      EXPECT_EQ(got.grad, want.grad);  // one subtraction and one product per element on both
      EXPECT_EQ(gpu.scratch.read(ctx).ticket, 0u) << "the last block resets the ticket";

      gpu.counters.zero(ctx);
      gpu.run(ctx);
      expect_same_bits(gpu.read(ctx), got);

      // Non-finite targets, wherever they lie, are counted as the host counts them.
      SquaredErrorCase bad = c;
      const size_t n = bad.targets.size();
      for (size_t i = 0; i < n; i += 97)
        bad.targets[i] = i % 2 == 0 ? std::numeric_limits<float>::quiet_NaN()
                                    : std::numeric_limits<float>::infinity();
      bad.targets[n - 1] = -std::numeric_limits<float>::infinity();
      const LossResult want_bad = host_squared_error(bad, rows, cols);
      GpuSquaredError gpu_bad(ctx, bad, rows, cols);
      gpu_bad.run(ctx);
      const MetricCounters got_bad = gpu_bad.counters.read(ctx);
      EXPECT_GT(want_bad.counters.bad_targets, 0u);
      EXPECT_EQ(got_bad.bad_targets, want_bad.counters.bad_targets);
      EXPECT_EQ(got_bad.seen, want_bad.counters.seen);
    }
}

// A captured loss, replayed twice, gives the bits of two launches one by one: the scratch's ticket
// is back at 0 after each launch, so a replay needs no reset.
TEST(EngineGpu, LossKernelsGraphReplayMatchesLaunchByLaunch) {
  GPU_TEST_OR_SKIP();
  struct Shape {
    int rows, cols;
  };
  for (const Shape s : {Shape{256, 10}, Shape{7, 33}, Shape{4097, 257}, Shape{10000, 1000}}) {
    SCOPED_TRACE(shape_name(s.rows, s.cols));
    Context ctx(Device::CUDA, "naive", 1);
    // Two launches, then two replays of a captured one, from zeroed counters each time.
    auto check_replay = [&](auto& gpu) {
      gpu.run(ctx);
      gpu.run(ctx);
      const LossResult eager = gpu.read(ctx);
      gpu.counters.zero(ctx);
      const engine::CudaGraph graph = ctx.capture([&] { gpu.run(ctx); });
      graph.launch(ctx.stream());
      graph.launch(ctx.stream());
      expect_same_bits(gpu.read(ctx), eager);
      EXPECT_EQ(gpu.scratch.read(ctx).ticket, 0u);
    };
    {
      GpuXent gpu(ctx, xent_case(s.rows, s.cols), s.rows, s.cols);
      check_replay(gpu);
    }
    {
      GpuSquaredError gpu(ctx, squared_error_case(s.rows, s.cols), s.rows, s.cols);
      check_replay(gpu);
    }
  }
}

// Given a step counter, each loss kernel adds 1 to it once per launch and per graph replay, with
// one block and with many (the last block counts); given none, it counts nothing.
TEST(EngineGpu, LossKernelsCountTheStepWhenGivenACounter) {
  GPU_TEST_OR_SKIP();
  for (const int rows : {1, 4097}) {
    SCOPED_TRACE(rows);
    Context ctx(Device::CUDA, "naive", 1);
    ContextValue<int64_t> steps(ctx);
    steps.write(41);
    GpuXent xent(ctx, xent_case(rows, 10), rows, 10);
    GpuSquaredError mse(ctx, squared_error_case(rows, 3), rows, 3);
    const auto counted = [&] {
      engine::softmax_cross_entropy(ctx, xent.z, xent.labels, &xent.d, xent.counters.get(),
                                    xent.scratch.get(), steps.get());
      engine::mean_squared_error(ctx, mse.p, mse.t, &mse.d, mse.counters.get(), mse.scratch.get(),
                                 steps.get());
    };
    counted();
    xent.run(ctx);
    mse.run(ctx);
    EXPECT_EQ(steps.read(ctx), 43);
    const engine::CudaGraph graph = ctx.capture(counted);
    graph.launch(ctx.stream());
    graph.launch(ctx.stream());
    EXPECT_EQ(steps.read(ctx), 47);
  }
}

// On the GPU the ops need the scratch, and a loss runs on the device it was prepared on.
TEST(EngineGpu, LossOpsNeedScratchOnGpu) {
  GPU_TEST_OR_SKIP();
  Context ctx(Device::CUDA, "naive", 1);
  const Tensor z = Tensor::from_host(Device::CUDA, 2, 3, {1, 2, 3, 4, 5, 6});
  const LabelTensor labels(Device::CUDA, {0, 2});
  ContextValue<MetricCounters> counters(ctx);
  EXPECT_THROW_WITH(engine::softmax_cross_entropy(ctx, z, labels, nullptr, counters.get(), nullptr),
                    gemm_mlp::Error, "softmax_cross_entropy: scratch is a null pointer");
  EXPECT_THROW_WITH(engine::mean_squared_error(ctx, z, z, nullptr, counters.get(), nullptr),
                    gemm_mlp::Error, "mean_squared_error: scratch is a null pointer");

  Context cpu(Device::CPU, "cpu", 1);
  engine::Metrics metrics(ctx);
  engine::SoftmaxCrossEntropy xent;
  xent.prepare(cpu, 4, 3);
  EXPECT_THROW_WITH(xent.forward(ctx, z, labels, metrics), gemm_mlp::Error,
                    "softmax_cross_entropy: prepared on cpu but the context is cuda");
  engine::MeanSquaredError mse;
  mse.prepare(cpu, 4, 3);
  EXPECT_THROW_WITH(mse.forward(ctx, z, z, metrics), gemm_mlp::Error,
                    "mean_squared_error: prepared on cpu but the context is cuda");
}

}  // namespace
