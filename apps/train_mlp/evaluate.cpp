// train_mlp --eval (evaluate.h).
#include "apps/train_mlp/evaluate.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>

#include "apps/train_mlp/run_checks.h"
#include "data/loader.h"
#include "data/mnist.h"
#include "models/mlp.h"

int evaluate_checkpoint(const Options& o, engine::Device device, const gemm::Variant* variant) {
  const data::Dataset test_set = data::load_mnist(o.data_dir, data::Split::Test, o.dataset);
  // The newer whole file of a training pair: the model file, or the optimiser file beside it after
  // a save stopped between its two renames (engine::find_parameters), said so.
  const engine::ParameterFile file = engine::find_parameters(o.eval);
  if (!file.note.empty()) std::cout << "note: " << file.note << "\n";
  const models::MlpSizes sizes = models::mlp_sizes(file.path, file.header);
  if (sizes.inputs != test_set.features())
    throw std::runtime_error("--eval " + o.eval + ": the model " + sizes.text() + " takes " +
                             std::to_string(sizes.inputs) + " inputs, but the test images in " +
                             o.data_dir + " have " + std::to_string(test_set.features()) +
                             " pixels (" + std::to_string(test_set.rows) + "x" +
                             std::to_string(test_set.cols) + ")");
  if (sizes.classes != test_set.classes)
    throw std::runtime_error("--eval " + o.eval + ": the model " + sizes.text() + " has " +
                             std::to_string(sizes.classes) + " outputs, but " + o.dataset +
                             " has " + std::to_string(test_set.classes) + " classes");
  // Other test data than the run was scored on (a copy changed, another dataset of the same shape):
  // said, so that the scores are not taken for the run's.
  const auto tested = file.header.metadata.find("test_fingerprint");
  if (tested != file.header.metadata.end() && tested->second != data_fingerprint(test_set))
    std::cout << "note: " << o.eval << " was tested on data of fingerprint " << tested->second
              << ", but the test set in " << o.data_dir << " has fingerprint "
              << data_fingerprint(test_set) << ": these scores are on other data\n";
  require_model_fits(o, sizes.inputs, sizes.classes, std::min(o.batch, test_set.count), device);
  engine::Context ctx(device,
                      variant                          ? variant->name
                      : device == engine::Device::CUDA ? "auto"
                                                       : "cpu",
                      o.seed);
  models::MLP mlp(ctx, sizes.inputs, sizes.hidden, sizes.classes);
  engine::TrainerOptions t = trainer_options(o, 0, false);
  engine::Trainer trainer(ctx, mlp, t);
  engine::load_parameters(ctx, file, mlp.parameters());  // every tensor's checksum verified
  data::BatchLoader test_data(test_set, o.batch, o.seed, device, false, ctx.stream());
  const engine::MetricTotals te = trainer.evaluate(
      engine::Tensor::view(device, test_data.all_images(), test_data.count(), test_set.features()),
      engine::LabelTensor::view(device, test_data.all_labels(), test_data.count()));
  std::printf("%s (%s) on %s (%s): test loss %.4f  test accuracy %.2f%% (%lld images)\n",
              o.eval.c_str(), mlp.layer_sizes().c_str(), o.dataset.c_str(), o.data_dir.c_str(),
              te.mean_loss(), 100 * te.accuracy(), static_cast<long long>(te.seen));
  return 0;
}
