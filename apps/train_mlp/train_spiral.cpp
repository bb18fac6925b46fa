// train_spiral: the engine embedded in a toy model, start to finish. Classifies the points of
// three interleaved spirals with a 2-64-64-3 network, full batch, Adam. Runs on the GPU when there
// is one (naive GEMM; any device variant would do), otherwise on the CPU.
#include <cstdio>
#include <exception>

#include "engine/engine.h"
#include "models/spiral.h"

int main() try {
  const models::SpiralData d = models::make_spiral(100, 3, 0.1f, 1);
  const bool gpu = gemm::cuda_device_available();
  engine::Context ctx(gpu ? engine::Device::CUDA : engine::Device::CPU, gpu ? "naive" : "cpu", 1);

  models::SpiralClassifier net(ctx, d.classes, 64);
  net.prepare(ctx, d.count);  // all buffers, once
  engine::SoftmaxCrossEntropy loss;
  loss.prepare(ctx, d.count, d.classes);
  engine::Adam adam(ctx, net.parameters(), {1e-2f, 0.9f, 0.999f, 1e-8f, 0.0f});
  engine::Metrics metrics(ctx);
  engine::Labels y(ctx, d.labels);
  const engine::Tensor x = engine::Tensor::from_host(ctx.device(), d.count, 2, d.points);

  for (int step = 1; step <= 1000; ++step) {
    engine::train_step(ctx, net, loss, adam, x, y.data(), metrics);
    if (step % 200 == 0) {  // reading the metrics is the only wait for the device
      const engine::MetricTotals t = metrics.read(ctx);
      std::printf("step %4d  loss %.4f  accuracy %.1f%%\n", step, t.mean_loss(),
                  100 * t.accuracy());
      metrics.reset(ctx);
    }
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "train_spiral: error: %s\n", e.what());
  return 1;
}
