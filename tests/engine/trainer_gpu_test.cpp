// The trainer on the GPU: replaying the captured step as a CUDA graph against running it launch
// by launch, resuming from optimiser state saved after graph replays, and the mean squared error
// loss against the CPU's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "compare_to_cpu.h"
#include "engine/engine.h"
#include "expect_error.h"
#include "gpu_test.h"
#include "random_data.h"

namespace {

using engine::Context;
using engine::Device;
using engine::Tensor;

// Sets gemm's dependent launch for a scope.
class DependentLaunch {
 public:
  explicit DependentLaunch(bool on) : before_(gemm::dependent_launch()) {
    gemm::set_dependent_launch(on);
  }
  ~DependentLaunch() { gemm::set_dependent_launch(before_); }
  DependentLaunch(const DependentLaunch&) = delete;
  DependentLaunch& operator=(const DependentLaunch&) = delete;

 private:
  bool before_;
};

// The trainer's ways, for every device variant and both optimisers: launch by launch (one
// stream, or branched), the graph of a serial step, the graph with side streams, and that graph
// without
// dependent launch (base/launch.cuh) give the same losses and parameters, bit for bit. Batches
// from two buffers (so the graph is captured again when the input changes) and a partial batch
// (run launch by launch in all).
TEST(EngineGpu, GraphReplayMatchesLaunchByLaunch) {
  GPU_TEST_OR_SKIP();
  const int batch = 32, in = 50, classes = 10;
  std::mt19937_64 rng(31);
  const std::vector<float> xa = random_values(rng, batch * in), xb = random_values(rng, batch * in);
  std::vector<int32_t> ya(batch), yb(batch);
  for (int i = 0; i < batch; ++i) ya[i] = (i * 3) % classes, yb[i] = (i * 7 + 1) % classes;
  for (const gemm::Variant* v : device_variants())
    for (int adam = 0; adam < 2; ++adam)
      for_variant(*v, [&] {
        SCOPED_TRACE(adam ? "adam" : "sgd");
        // The branched graph's step before the capture runs branched launch by launch.
        enum Mode { kEager, kBranchedEager, kSerialGraph, kGraph, kPlainLaunchGraph, kModes };
        std::vector<double> losses[kModes];
        std::vector<float> weights[kModes];
        for (int mode = 0; mode < kModes; ++mode) {
          const DependentLaunch dependent(mode != kPlainLaunchGraph);
          Context ctx(Device::CUDA, *v, 5);
          engine::Sequential net;
          net.add<engine::Linear>(ctx, in, 64);
          net.add<engine::ReLU>();
          net.add<engine::Linear>(ctx, 64, 48);
          net.add<engine::ReLU>();
          net.add<engine::Linear>(ctx, 48, classes);
          engine::TrainerOptions o;
          o.max_batch = batch;
          o.optimizer = adam ? engine::TrainerOptions::Optimizer::Adam
                             : engine::TrainerOptions::Optimizer::Sgd;
          o.sgd = {0.1f, 0.9f, 5e-4f, 12};
          o.adam.lr = 1e-2f, o.adam.cosine_steps = 12;
          o.cuda_graph = mode >= kSerialGraph;
          o.parallel_step = mode != kEager && mode != kSerialGraph;
          o.branch_launch_by_launch = mode == kBranchedEager;
          engine::Trainer trainer(ctx, net, o);
          const Tensor x_a = Tensor::from_host(Device::CUDA, batch, in, xa);
          const Tensor x_b = Tensor::from_host(Device::CUDA, batch, in, xb);
          const engine::LabelTensor y_a(Device::CUDA, ya), y_b(Device::CUDA, yb);
          for (int s = 0; s < 12; ++s) {
            if (s == 5)
              trainer.step(x_a.first_rows(19), y_a.first(19));
            else if (s < 5)
              trainer.step(x_a, y_a);
            else
              trainer.step(x_b, y_b);
            losses[mode].push_back(trainer.take_metrics().loss_sum);
          }
          EXPECT_EQ(trainer.graph_active(), mode >= kSerialGraph) << trainer.graph_note();
          EXPECT_EQ(trainer.steps(), 12);
          for (engine::Parameter* p : net.parameters()) {
            const std::vector<float> values = p->value.download(ctx.stream());
            weights[mode].insert(weights[mode].end(), values.begin(), values.end());
          }
        }
        for (int mode = kBranchedEager; mode < kModes; ++mode) {
          const char* names[kModes] = {"", "branched launch by launch", "serial graph",
                                       "branched graph", "branched graph, plain launch"};
          SCOPED_TRACE(names[mode]);
          EXPECT_EQ(losses[kEager], losses[mode]);
          EXPECT_EQ(weights[kEager], weights[mode]);
        }
        EXPECT_TRUE(std::isfinite(losses[kGraph].back()));
      });
}

// The optimiser state saved after graph replays records the steps the device took (a captured
// step is queued once but runs at every replay), and resuming from it continues bit for bit.
TEST(EngineGpu, OptimizerStateAfterGraphReplaysResumesExactly) {
  GPU_TEST_OR_SKIP();
  const int batch = 16, in = 12, classes = 4;
  std::mt19937_64 rng(41);
  const std::vector<float> xv = random_values(rng, batch * in);
  std::vector<int32_t> yv(batch);
  for (int i = 0; i < batch; ++i) yv[i] = i % classes;
  const std::string path = ::testing::TempDir() + "gpu_resume.safetensors";
  const std::string optim = engine::optimizer_state_path(path);
  auto run = [&](int steps, bool resume, bool save) {
    Context ctx(Device::CUDA, "warptile", 3);
    engine::Sequential net;
    net.add<engine::Linear>(ctx, in, 32);
    net.add<engine::ReLU>();
    net.add<engine::Linear>(ctx, 32, classes);
    engine::TrainerOptions o;
    o.max_batch = batch;
    o.sgd = {0.1f, 0.9f, 1e-3f, 20};
    engine::Trainer trainer(ctx, net, o);
    if (resume) {
      engine::load_checkpoint(ctx, path, net.parameters());
      engine::load_optimizer_state(ctx, optim, trainer.optimizer());
      trainer.resume_from_optimizer();
    }
    const Tensor x = Tensor::from_host(Device::CUDA, batch, in, xv);
    const engine::LabelTensor y(Device::CUDA, yv);
    for (int s = 0; s < steps; ++s) trainer.step(x, y);
    EXPECT_TRUE(trainer.graph_active()) << trainer.graph_note();
    if (save) {
      engine::save_checkpoint(ctx, path, net.parameters());
      engine::save_optimizer_state(ctx, optim, trainer.optimizer());
    }
    return net.parameters()[0]->value.download(ctx.stream());
  };
  const std::vector<float> straight = run(10, false, false);
  run(6, false, true);
  EXPECT_EQ(engine::read_checkpoint_metadata(optim).at("step"), "6");
  EXPECT_EQ(run(4, true, false), straight);
  std::remove(path.c_str());
  std::remove(optim.c_str());
}

// The mean squared error kernel against the host loop: the gradient bit for bit (one subtraction
// and one product per element on both), the loss to rounding (the sums run in other orders).
// Shapes: one output (a scalar regression), a batch of 37 × 10, and rows wider than a warp.
TEST(EngineGpu, MeanSquaredErrorMatchesCpu) {
  GPU_TEST_OR_SKIP();
  struct Shape {
    int batch, cols;
  };
  for (const Shape s : {Shape{37, 1}, Shape{37, 10}, Shape{5, 100}}) {
    SCOPED_TRACE(std::to_string(s.batch) + "x" + std::to_string(s.cols));
    std::mt19937_64 rng(6);
    const std::vector<float> pv = random_values(rng, s.batch * s.cols, -3, 3);
    const std::vector<float> tv = random_values(rng, s.batch * s.cols, -3, 3);

    Context cpu(Device::CPU, "cpu", 1);
    engine::Metrics cm(cpu);
    engine::MeanSquaredError closs;
    closs.prepare(cpu, 64, s.cols);
    const Tensor p = Tensor::from_host(Device::CPU, s.batch, s.cols, pv);
    const Tensor t = Tensor::from_host(Device::CPU, s.batch, s.cols, tv);
    const std::vector<float> d_ref = closs.forward_backward(cpu, p, t, cm).download();
    const engine::MetricTotals t_ref = cm.read(cpu);

    Context ctx(Device::CUDA, "naive", 1);
    engine::Metrics gm(ctx);
    engine::MeanSquaredError gloss;
    gloss.prepare(ctx, 64, s.cols);
    const Tensor gp = Tensor::from_host(Device::CUDA, s.batch, s.cols, pv);
    const Tensor gt = Tensor::from_host(Device::CUDA, s.batch, s.cols, tv);
    EXPECT_EQ(gloss.forward_backward(ctx, gp, gt, gm).download(ctx.stream()), d_ref);
    const engine::MetricTotals g = gm.read(ctx);
    EXPECT_EQ(g.seen, s.batch);
    EXPECT_EQ(g.correct, 0);
    EXPECT_NEAR(g.loss_sum, t_ref.loss_sum, 1e-5 * t_ref.loss_sum);

    // Evaluation adds the same loss and writes no gradient.
    gloss.forward(ctx, gp, gt, gm);
    EXPECT_NEAR(gm.read(ctx).loss_sum, 2 * g.loss_sum, 1e-12 * g.loss_sum);

    // Non-finite targets are counted wherever they lie, and reported on read.
    std::vector<float> bad = tv;
    bad.front() = std::numeric_limits<float>::quiet_NaN();
    bad.back() = -std::numeric_limits<float>::infinity();
    gloss.forward(ctx, gp, Tensor::from_host(Device::CUDA, s.batch, s.cols, bad), gm);
    EXPECT_THROW_WITH(gm.read(ctx), gemm_mlp::Error, "2 target values were NaN or infinite");
  }
}

// A regression trainer on the GPU: the graph replay and launch by launch give the same bits, and
// both follow the CPU trainer to rounding.
TEST(EngineGpu, MeanSquaredErrorTrainerMatchesCpu) {
  GPU_TEST_OR_SKIP();
  const int batch = 24, in = 7, out = 3, steps = 10;
  std::mt19937_64 rng(51);
  const std::vector<float> xv = random_values(rng, batch * in),
                           yv = random_values(rng, batch * out);
  auto run = [&](Device device, bool graph, std::vector<double>& losses) {
    Context ctx(device, device == Device::CUDA ? "naive" : "cpu", 8);
    engine::Sequential net;
    net.add<engine::Linear>(ctx, in, 32);
    net.add<engine::ReLU>();
    net.add<engine::Linear>(ctx, 32, out);
    // The same initial parameters on both backends (cuRAND and the host generator differ).
    std::mt19937_64 init(52);
    for (engine::Parameter* p : net.parameters()) {
      std::vector<float> v = random_values(init, p->value.rows() * p->value.cols());
      for (float& w : v) w *= 0.3f;
      p->value.upload(v, ctx.stream());
    }
    engine::TrainerOptions o;
    o.max_batch = batch;
    o.loss = engine::TrainerOptions::Loss::MeanSquaredError;
    o.sgd.lr = 0.05f;  // SGD: Adam would magnify the backends' rounding in tiny gradients
    o.cuda_graph = graph;
    engine::Trainer trainer(ctx, net, o);
    const Tensor x = Tensor::from_host(device, batch, in, xv);
    const Tensor y = Tensor::from_host(device, batch, out, yv);
    for (int s = 0; s < steps; ++s) {
      trainer.step(x, y);
      losses.push_back(trainer.take_metrics().mean_loss());
    }
    EXPECT_EQ(trainer.graph_active(), graph && device == Device::CUDA) << trainer.graph_note();
    return net.parameters()[0]->value.download(ctx.stream());
  };
  std::vector<double> replayed, launched, on_cpu;
  const std::vector<float> w_replayed = run(Device::CUDA, true, replayed);
  const std::vector<float> w_launched = run(Device::CUDA, false, launched);
  const std::vector<float> w_cpu = run(Device::CPU, false, on_cpu);
  EXPECT_EQ(replayed, launched);
  EXPECT_EQ(w_replayed, w_launched);
  expect_close(w_replayed, w_cpu, 1e-4, "weights after 10 steps");
  for (int s = 0; s < steps; ++s) EXPECT_NEAR(replayed[s], on_cpu[s], 1e-4 * on_cpu[s]) << s;
  EXPECT_LT(replayed.back(), replayed.front());
}

// On the GPU, with the step replayed as a graph: predict returns the same outputs as the CPU's
// trainer given the same parameters, into the caller's memory; a loss made NaN (by a NaN
// output bias) is NonFiniteLoss naming its step.
TEST(EngineGpu, PredictAndNonFiniteLossOnTheGpu) {
  GPU_TEST_OR_SKIP();
  const int in = 5, out = 3, n = 70, batch = 32;  // 32 + 32 + 6 rows
  std::mt19937_64 rng(17);
  const std::vector<float> xv = random_values(rng, n * in);
  std::vector<float> ys[2];
  for (Device device : {Device::CPU, Device::CUDA}) {
    Context ctx(device, 3);
    engine::Sequential net;
    net.add<engine::Linear>(ctx, in, 16);
    net.add<engine::ReLU>();
    net.add<engine::Linear>(ctx, 16, out);
    engine::TrainerOptions o;
    o.max_batch = batch;
    engine::Trainer trainer(ctx, net, o);
    if (device == Device::CUDA) {  // the CPU's parameters
      Context host(Device::CPU, 3);
      engine::Sequential cpu;
      cpu.add<engine::Linear>(host, in, 16);
      cpu.add<engine::ReLU>();
      cpu.add<engine::Linear>(host, 16, out);
      const auto from = cpu.parameters(), to = net.parameters();
      for (size_t i = 0; i < from.size(); ++i)
        to[i]->value.upload(from[i]->value.download(), ctx.stream());
    }
    ys[device == Device::CUDA] = trainer.predict(Tensor::from_host(device, n, in, xv));
    if (device == Device::CUDA) {
      const Tensor x = Tensor::from_host(device, batch, in,
                                         std::vector<float>(xv.begin(), xv.begin() + batch * in));
      std::vector<int32_t> labels(batch, 1);
      const engine::LabelTensor y(device, labels);
      for (int step = 0; step < 3; ++step) trainer.step(x, y);  // the third replays the graph
      EXPECT_TRUE(std::isfinite(trainer.take_metrics().loss_sum));
      // A NaN input would not do: the hidden ReLU's fmax(NaN, 0) is 0, here as on the CPU. A NaN
      // in the output layer's bias reaches the loss.
      auto& out_bias = net.parameters().back()->value;
      std::vector<float> b = out_bias.download(ctx.stream());
      b[1] = std::numeric_limits<float>::quiet_NaN();
      out_bias.upload(b, ctx.stream());
      trainer.step(x, y);  // step 4
      EXPECT_THROW_WITH(trainer.take_metrics(), engine::NonFiniteLoss, "in step 4;");
    }
  }
  ASSERT_EQ(ys[0].size(), static_cast<size_t>(n * out));
  ASSERT_EQ(ys[1].size(), ys[0].size());
  for (size_t i = 0; i < ys[0].size(); ++i) EXPECT_NEAR(ys[1][i], ys[0][i], 1e-4) << i;
}

}  // namespace
