// train_spiral: the engine embedded in a toy model, start to finish. Classifies the points of
// three interleaved spirals with a 2-64-64-3 network, full batch, Adam. The Context picks the GPU
// when there is one (and the fastest fp32 kernel measured there), otherwise the CPU.
#include <cstdio>
#include <exception>

#include "engine/engine.h"
#include "models/spiral.h"

int main() try {
  const models::SpiralData d = models::make_spiral(100, 3, 0.1f, 1);
  engine::Context ctx(/*seed=*/1);
  models::SpiralClassifier net(ctx, d.classes, 64);

  engine::TrainerOptions options;
  options.max_batch = d.count;
  options.classes = d.classes;
  options.optimizer = engine::TrainerOptions::Optimizer::Adam;
  options.adam.lr = 1e-2f;
  engine::Trainer trainer(ctx, net, options);

  const engine::Tensor x = engine::Tensor::from_host(ctx.device(), d.count, 2, d.points);
  const engine::LabelTensor y(ctx.device(), d.labels);
  for (int step = 1; step <= 1000; ++step) {
    trainer.step(x, y);
    if (step % 200 == 0) {  // reading the metrics is the only wait for the device
      const engine::MetricTotals t = trainer.take_metrics();
      std::printf("step %4d  loss %.4f  accuracy %.1f%%\n", step, t.mean_loss(),
                  100 * t.accuracy());
    }
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "train_spiral: error: %s\n", e.what());
  return 1;
}
