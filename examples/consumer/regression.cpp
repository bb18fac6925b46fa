// A regression in about 20 lines: a 1-16-1 MLP learns y = 2x + 1 on [-1, 1]; evaluate() scores the
// trained network, and predict() hands its outputs back in a std::vector the program keeps.
#include <cmath>
#include <cstdio>
#include <vector>

#include "engine/engine.h"

int main() {
  std::vector<float> xs(64), ys(64);
  for (int i = 0; i < 64; ++i) xs[i] = -1 + 2 * i / 63.0f, ys[i] = 2 * xs[i] + 1;
  engine::Context ctx(/*seed=*/1);  // the GPU if there is one, else the CPU
  engine::Sequential net;
  net.add<engine::Linear>(ctx, 1, 16);
  net.add<engine::ReLU>();
  net.add<engine::Linear>(ctx, 16, 1);
  engine::TrainerOptions o;
  o.max_batch = 64, o.loss = engine::TrainerOptions::Loss::MeanSquaredError;
  o.optimizer = engine::TrainerOptions::Optimizer::Adam, o.adam.lr = 1e-2f;
  engine::Trainer trainer(ctx, net, o);
  const engine::Tensor x = engine::Tensor::from_host(ctx.device(), 64, 1, xs);
  const engine::Tensor y = engine::Tensor::from_host(ctx.device(), 64, 1, ys);
  for (int step = 0; step < 1000; ++step) trainer.step(x, y);
  // take_metrics(): the training loss averaged over every step since it was last taken (here all
  // 1000, the early ones far from a fit); it throws if training diverged.
  const double training_mse = trainer.take_metrics().mean_loss();
  const double mse = trainer.evaluate(x, y).mean_loss();  // the trained network's, now
  std::printf("mse %.6f (the mean over the 1000 training steps: %.6f)\n", mse, training_mse);
  const std::vector<float> predicted = trainer.predict(x);  // 64 values, ours to keep
  std::printf("f(-1) = %.3f (want -1), f(1) = %.3f (want 3)\n", predicted[0], predicted[63]);
  return std::abs(predicted[0] + 1) < 0.05f && std::abs(predicted[63] - 3) < 0.05f && mse < 1e-3
             ? 0
             : 1;
}
