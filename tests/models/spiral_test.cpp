// The spiral toy model: the data is what it claims, and the engine learns it on the CPU.
#include "models/spiral.h"

#include <gtest/gtest.h>

#include <cmath>

#include "engine/engine.h"

namespace {

TEST(Spiral, DataShape) {
  const models::SpiralData d = models::make_spiral(50, 3, 0.1f, 1);
  EXPECT_EQ(d.count, 150);
  EXPECT_EQ(d.points.size(), 300u);
  EXPECT_EQ(d.labels.size(), 150u);
  for (size_t i = 0; i < d.labels.size(); ++i) {
    EXPECT_EQ(d.labels[i], static_cast<int>(i / 50));
    EXPECT_LE(std::hypot(d.points[2 * i], d.points[2 * i + 1]), 1.0f + 1e-6f);
  }
  EXPECT_THROW(models::make_spiral(0, 3, 0.1f, 1), gemm_mlp::Error);
}

TEST(Spiral, CpuClassifierLearnsTheSpiral) {
  const models::SpiralData d = models::make_spiral(100, 3, 0.1f, 2);
  engine::Context ctx(engine::Device::CPU, "cpu", 3);
  models::SpiralClassifier net(ctx, d.classes, 64);
  engine::TrainerOptions options;
  options.max_batch = d.count;
  options.optimizer = engine::TrainerOptions::Optimizer::Adam;
  options.adam.lr = 1e-2f;
  engine::Trainer trainer(ctx, net, options);
  const engine::Tensor x = engine::Tensor::from_host(ctx.device(), d.count, 2, d.points);
  const engine::LabelTensor y(ctx.device(), d.labels);
  for (int step = 0; step < 600; ++step) trainer.step(x, y);
  EXPECT_GT(trainer.evaluate(x, y).accuracy(), 0.95);
}

}  // namespace
