// The trainer on the GPU: replaying the captured step as a CUDA graph against running it launch
// by launch, and resuming from optimiser state saved after graph replays.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "compare_to_cpu.h"
#include "engine/engine.h"
#include "gpu_test.h"
#include "random_data.h"

namespace {

using engine::Context;
using engine::Device;
using engine::Tensor;

// The trainer's two ways, for every device variant and both optimisers: replaying the captured
// graph and running launch by launch give the same losses and parameters, bit for bit. Batches
// from two buffers (so the graph is captured again when the input changes) and a partial batch
// (run launch by launch in both).
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
        std::vector<double> losses[2];
        std::vector<float> weights[2];
        for (int graph = 0; graph < 2; ++graph) {
          Context ctx(Device::CUDA, *v, 5);
          engine::Sequential net;
          net.add<engine::Linear>(ctx, in, 64);
          net.add<engine::ReLU>();
          net.add<engine::Linear>(ctx, 64, 48);
          net.add<engine::ReLU>();
          net.add<engine::Linear>(ctx, 48, classes);
          engine::TrainerOptions o;
          o.max_batch = batch;
          o.classes = classes;
          o.optimizer = adam ? engine::TrainerOptions::Optimizer::Adam
                             : engine::TrainerOptions::Optimizer::Sgd;
          o.sgd = {0.1f, 0.9f, 5e-4f, 12};
          o.adam.lr = 1e-2f, o.adam.cosine_steps = 12;
          o.cuda_graph = graph == 1;
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
            losses[graph].push_back(trainer.take_metrics().loss_sum);
          }
          EXPECT_EQ(trainer.graph_active(), graph == 1) << trainer.graph_note();
          EXPECT_EQ(trainer.steps(), 12);
          weights[graph] = net.parameters()[0]->value.download(ctx.stream());
        }
        EXPECT_EQ(losses[0], losses[1]);
        EXPECT_EQ(weights[0], weights[1]);
        EXPECT_TRUE(std::isfinite(losses[1].back()));
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
    o.max_batch = batch, o.classes = classes;
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

}  // namespace
