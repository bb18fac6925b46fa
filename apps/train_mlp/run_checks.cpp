// train_mlp's checks around a run (run_checks.h).
#include "apps/train_mlp/run_checks.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "base/memory_limit.h"
#include "models/mlp.h"

void require_model_fits(const Options& o, int features, int classes, int batch,
                        engine::Device device) {
  const double parameters = models::mlp_parameter_count(features, o.hidden, classes);
  double widths = features + classes;  // a layer's output, and the next one's input gradient
  for (int h : o.hidden) widths += 2.0 * h;
  const double activations = 4.0 * batch * widths;
  const double kept = parameters * 4 * (o.optimizer == "adam" ? 4 : 3) + activations;
  const double bytes = device == engine::Device::CUDA ? 2 * kept : kept + 2 * parameters * 4;
  std::string hidden;
  for (int h : o.hidden) hidden += (hidden.empty() ? "" : ",") + std::to_string(h);
  char count[32];
  std::snprintf(count, sizeof count, "%.3g", parameters);
  const std::string what = "--hidden " + hidden + ": the model " +
                           models::MlpSizes{features, o.hidden, classes}.text() + " has " + count +
                           " parameters; with their gradients, optimiser state and a batch's "
                           "activations, it";
  const uint64_t needed = bytes < 1.8e19 ? static_cast<uint64_t>(bytes) : UINT64_MAX;
  if (device == engine::Device::CUDA)
    gemm_mlp::check_device_allocation(needed, what);
  else
    gemm_mlp::check_host_allocation(needed, what);
}

void warn_if_loss_exploded(const RunResult& run, int classes, const Options& o) {
  if (run.epochs.empty()) return;
  const double loss = run.epochs.back().loss, guess = std::log(static_cast<double>(classes));
  std::fflush(stdout);
  if (loss > 2 * guess)
    std::fprintf(stderr,
                 "train_mlp: warning: [%s] the last epoch's training loss %.4g is more than twice "
                 "ln(%d) = %.2f, the loss of a uniform guess: training blew up (try a smaller "
                 "--lr)%s\n",
                 run.variant.c_str(), loss, classes, guess,
                 o.save.empty() ? "" : "; the checkpoint holds these weights");
}
