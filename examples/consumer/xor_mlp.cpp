// A toy classifier on the installed engine: a 2-16-2 MLP learns XOR, on the GPU if there is one.
#include <cstdio>

#include "engine/engine.h"

int main() {
  engine::Context ctx(/*seed=*/7);
  engine::Sequential net;
  net.add<engine::Linear>(ctx, 2, 16);
  net.add<engine::ReLU>();
  net.add<engine::Linear>(ctx, 16, 2);  // two outputs: the scores of classes 0 and 1
  engine::TrainerOptions options;       // the loss: cross-entropy by default
  options.max_batch = 4;
  options.sgd.lr = 0.2f;
  options.sgd.momentum = 0.9f;
  engine::Trainer trainer(ctx, net, options);
  const engine::Tensor x = engine::Tensor::from_host(ctx.device(), 4, 2, {0, 0, 0, 1, 1, 0, 1, 1});
  const engine::LabelTensor y(ctx.device(), {0, 1, 1, 0});
  for (int step = 0; step < 300; ++step) trainer.step(x, y);
  const engine::MetricTotals t = trainer.evaluate(x, y);
  std::printf("xor on %s: accuracy %.0f%%\n", engine::device_name(ctx.device()),
              100 * t.accuracy());
  return t.accuracy() == 1.0 ? 0 : 1;
}
