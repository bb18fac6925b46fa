// A toy regression on the installed engine: a 1-32-32-1 MLP fits y = sin(x) on [−π, π] with the
// mean squared error, on the GPU if there is one. The loss and its gradient run where the network
// does; the host only reads the metrics.
#include <cmath>
#include <cstdio>
#include <vector>

#include "engine/engine.h"

int main() {
  const int points = 256;
  const float pi = 3.14159265f;
  std::vector<float> xs(points), ys(points), between(points), sin_between(points);
  for (int i = 0; i < points; ++i) {
    xs[i] = -pi + 2 * pi * static_cast<float>(i) / (points - 1);
    ys[i] = std::sin(xs[i]);
    between[i] = xs[i] + pi / (points - 1);  // halfway to the next training point: unseen
    sin_between[i] = std::sin(between[i]);
  }

  engine::Context ctx(/*seed=*/3);
  engine::Sequential net;
  net.add<engine::Linear>(ctx, 1, 32);
  net.add<engine::ReLU>();
  net.add<engine::Linear>(ctx, 32, 32);
  net.add<engine::ReLU>();
  net.add<engine::Linear>(ctx, 32, 1);  // one output: the prediction of sin(x)
  engine::TrainerOptions options;
  options.max_batch = points;
  options.loss = engine::TrainerOptions::Loss::MeanSquaredError;
  options.optimizer = engine::TrainerOptions::Optimizer::Adam;
  options.adam.lr = 1e-2f;
  options.adam.cosine_steps = 2000;
  engine::Trainer trainer(ctx, net, options);

  const engine::Tensor x = engine::Tensor::from_host(ctx.device(), points, 1, xs);
  const engine::Tensor y = engine::Tensor::from_host(ctx.device(), points, 1, ys);
  for (int step = 1; step <= 2000; ++step) {
    trainer.step(x, y);  // full batch: targets are a points×1 Tensor
    if (step % 500 == 0)
      std::printf("step %4d  mse %.5f\n", step, trainer.take_metrics().mean_loss());
  }
  const engine::Tensor x_test = engine::Tensor::from_host(ctx.device(), points, 1, between);
  const engine::Tensor y_test = engine::Tensor::from_host(ctx.device(), points, 1, sin_between);
  const double mse = trainer.evaluate(x_test, y_test).mean_loss();
  std::printf("sin(x) on %s: test mse %.5f\n", engine::device_name(ctx.device()), mse);
  return mse < 1e-3 ? 0 : 1;
}
