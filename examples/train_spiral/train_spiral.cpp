// train_spiral: the engine embedded in a toy model, start to finish. Classifies the points of
// three interleaved spirals with a 2-H-H-3 network, full batch, Adam. By default it runs on the
// GPU when there is one (with the fastest fp32 kernel measured there), else on the CPU.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "base/cuda_check.h"
#include "base/memory_limit.h"
#include "base/openblas_threads.h"
#include "engine/engine.h"
#include "models/spiral.h"

GEMM_MLP_ONE_OPENBLAS_THREAD_UNDER_ADDRESS_LIMIT;

int main(int argc, char** argv) {
  int steps = 1000, hidden = 64;
  std::string device_option = "auto", variant;
  CLI::App app{"Train a small MLP on three interleaved spirals: the engine in a toy model."};
  app.add_option("--steps", steps, "Training steps (full batch)")->capture_default_str();
  app.add_option("--hidden", hidden, "Width of the two hidden layers")->capture_default_str();
  app.add_option("--device", device_option, "auto, cpu or cuda")->capture_default_str();
  app.add_option("--gemm", variant, "GEMM variant (default: auto on the GPU, cpu on the CPU)");
  CLI11_PARSE(app, argc, argv);
  try {
    if (steps < 1 || hidden < 1) throw gemm_mlp::Error("--steps and --hidden must be >= 1");
    if (app.count("--gemm") > 0 && variant.empty())
      throw gemm_mlp::Error("--gemm needs a value, got ''");
    const engine::Device device = gemm_mlp::resolve_device(device_option, "--device");
    if (device == engine::Device::CPU) gemm::reserve_host_scratch();  // before the model's memory
    // The model's memory from --hidden, before anything is allocated (as train_mlp checks it):
    // the 2-H-H-3 parameters, their gradients and Adam's two moments, 4 bytes each.
    const double h = hidden, parameters = 2 * h + h + h * h + h + 3 * h + 3;
    const double bytes = parameters * 4 * 4;
    const uint64_t needed = bytes < 1.8e19 ? static_cast<uint64_t>(bytes) : UINT64_MAX;
    const std::string what = "--hidden " + std::to_string(hidden) +
                             ": the model's parameters, with their gradients and Adam's state,";
    if (device == engine::Device::CUDA)
      gemm_mlp::check_device_allocation(needed, what);
    else
      gemm_mlp::check_host_allocation(needed, what);
    const std::unique_ptr<engine::Context> ctx =
        variant.empty() ? std::make_unique<engine::Context>(device, /*seed=*/1)
                        : std::make_unique<engine::Context>(device, variant, /*seed=*/1);

    const models::SpiralData d = models::make_spiral(100, 3, 0.1f, 1);
    models::SpiralClassifier net(*ctx, d.classes, hidden);
    engine::TrainerOptions options;
    options.max_batch = d.count;
    options.optimizer = engine::TrainerOptions::Optimizer::Adam;
    options.adam.lr = 1e-2f;
    engine::Trainer trainer(*ctx, net, options);

    const engine::Tensor x = engine::Tensor::from_host(ctx->device(), d.count, 2, d.points);
    const engine::LabelTensor y(ctx->device(), d.labels);
    for (int step = 1; step <= steps; ++step) {
      trainer.step(x, y);
      if (step % 200 == 0 || step == steps) {  // reading the metrics is the only wait
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
}
