// train_mlp: trains an MLP on MNIST with every matrix product going through the chosen GEMM
// variant, and reports per-epoch time split into GEMM time and the rest.
//
//   train_mlp                          784-1024-1024-10, 10 epochs, SGD (lr 0.1, momentum 0.9,
//                                      weight decay 5e-4, cosine decay), --gemm vec
//   train_mlp --gemm naive --epochs 3
//   train_mlp --compare                every FP32 device variant, same model, same seed
//   train_mlp --compare cublas_tf32 --results out.json   ... plus the TF32 one, saved as JSON
//
// Timing: an epoch's time runs from its first shuffle to its last optimiser step, as the device
// saw it (CUDA events); evaluation of the test set is outside it. Before the first epoch, one
// untimed training step on a scratch copy of the model loads every kernel and cuBLAS, so the
// first epoch is not charged for one-time start-up.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "data/loader.h"
#include "data/mnist.h"
#include "engine/engine.h"
#include "models/mlp.h"

namespace {

struct Options {
  std::string gemm;  // empty: vec on CUDA, cpu on the CPU
  bool compare = false;
  std::vector<std::string> compare_extra;
  std::string results;
  int epochs = 10;
  int batch = 256;
  std::vector<int> hidden = {1024, 1024};
  float lr = 0.0f;  // 0: the optimiser's default (0.1 for sgd, 1e-3 for adam)
  std::string optimizer = "sgd";
  float momentum = 0.9f;
  float weight_decay = 5e-4f;
  uint64_t seed = 1;
  std::string data_dir = "data/mnist";
  std::string device = "auto";
  int train_limit = 0;  // 0: all
  std::string save;
};

struct EpochLog {
  double loss, train_acc, test_acc, epoch_s, gemm_s;
};

struct RunResult {
  std::string variant;
  std::vector<EpochLog> epochs;
  double mean_epoch_s() const {
    double s = 0;
    for (const EpochLog& e : epochs) s += e.epoch_s;
    return s / static_cast<double>(epochs.size());
  }
  double mean_gemm_s() const {
    double s = 0;
    for (const EpochLog& e : epochs) s += e.gemm_s;
    return s / static_cast<double>(epochs.size());
  }
};

// A bar on stderr, only when stderr is a terminal. It counts batches handed to the device, which
// runs a little behind; reading the device's progress would need a synchronisation.
class ProgressBar {
 public:
  ProgressBar(int epoch, int total) : epoch_(epoch), total_(total), on_(isatty(STDERR_FILENO)) {}
  void update(int done) {
    if (!on_ || (done % std::max(1, total_ / 50) != 0 && done != total_)) return;
    const int width = 30, filled = width * done / total_;
    std::fprintf(stderr, "\r  epoch %d [%s%s] %d/%d", epoch_, std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), done, total_);
    std::fflush(stderr);
  }
  ~ProgressBar() {
    if (on_) std::fprintf(stderr, "\r%60s\r", "");  // clear the line for the epoch's summary
  }

 private:
  int epoch_, total_;
  bool on_;
};

std::unique_ptr<engine::Optimizer> make_optimizer(const Options& o, engine::Context& ctx,
                                                  std::vector<engine::Parameter*> params) {
  if (o.optimizer == "sgd")
    return std::make_unique<engine::Sgd>(
        ctx, params, engine::SgdOptions{o.lr > 0 ? o.lr : 0.1f, o.momentum, o.weight_decay});
  engine::AdamOptions a;
  a.lr = o.lr > 0 ? o.lr : 1e-3f;
  a.weight_decay = o.weight_decay;
  return std::make_unique<engine::Adam>(ctx, params, a);
}

// Accuracy of `mlp` on a whole dataset held by `loader`, in its original order.
engine::MetricTotals evaluate(engine::Context& ctx, models::MLP& mlp,
                              engine::SoftmaxCrossEntropy& loss, engine::Metrics& metrics,
                              const data::BatchLoader& loader) {
  metrics.reset(ctx);
  const int n = loader.count(), f = loader.features(), b = loader.batch_size();
  for (int start = 0; start < n; start += b) {
    const int size = std::min(b, n - start);
    const engine::Tensor x = engine::Tensor::view(
        ctx.device(), loader.all_images() + static_cast<int64_t>(start) * f, size, f);
    engine::eval_step(ctx, mlp, loss, x, loader.all_labels() + start, metrics);
  }
  return metrics.read(ctx);
}

RunResult train(const Options& o, engine::Device device, const gemm::Variant& variant,
                const data::Dataset& train_set, const data::Dataset& test_set) {
  engine::Context ctx(device, variant, o.seed);
  const auto where = device == engine::Device::CUDA ? data::BatchLoader::Where::Device
                                                    : data::BatchLoader::Where::Host;
  data::BatchLoader train_data(train_set, o.batch, o.seed, where, false, ctx.stream());
  data::BatchLoader test_data(test_set, o.batch, o.seed, where, false, ctx.stream());
  const int features = train_set.features(), classes = train_set.classes;

  models::MLP mlp(ctx, features, o.hidden, classes);
  mlp.prepare(ctx, o.batch);
  engine::SoftmaxCrossEntropy loss;
  loss.prepare(ctx, o.batch, classes);
  engine::Metrics train_metrics(ctx), test_metrics(ctx);
  std::unique_ptr<engine::Optimizer> opt = make_optimizer(o, ctx, mlp.parameters());
  const int batches = train_data.num_batches();

  // Untimed warm-up on a scratch model (built after the real one, so the real one's
  // initialisation does not depend on it). It also tells how many GEMMs a step makes, so the
  // event pool can be sized for a whole epoch now, outside the timed loop.
  {
    models::MLP scratch(ctx, features, o.hidden, classes);
    scratch.prepare(ctx, o.batch);
    std::unique_ptr<engine::Optimizer> scratch_opt = make_optimizer(o, ctx, scratch.parameters());
    train_data.begin_epoch(0);
    const data::BatchLoader::Batch b = train_data.batch(0);
    const engine::Tensor x = engine::Tensor::view(device, b.x, b.size, features);
    ctx.begin_epoch();
    engine::train_step(ctx, scratch, loss, *scratch_opt, x, b.y, train_metrics);
    const engine::EpochTimes warm = ctx.end_epoch();
    ctx.reserve_gemm_timers(warm.gemm_calls * batches);
  }

  std::cout << "[" << variant.name << "] " << mlp.layer_sizes() << " on "
            << engine::device_name(device) << ", " << train_set.count << " training examples, "
            << batches << " batches of " << o.batch << ", " << o.optimizer << "\n";
  RunResult result;
  result.variant = variant.name;
  const double base_lr = opt->lr();
  const double total_steps = static_cast<double>(o.epochs) * batches;
  for (int epoch = 1; epoch <= o.epochs; ++epoch) {
    train_metrics.reset(ctx);
    ctx.begin_epoch();
    train_data.begin_epoch(epoch);
    {
      ProgressBar bar(epoch, batches);
      for (int i = 0; i < batches; ++i) {
        // Cosine decay from lr to 0 over the run, per step (host arithmetic only).
        const double t = ((epoch - 1) * static_cast<double>(batches) + i) / total_steps;
        opt->set_lr(static_cast<float>(base_lr * 0.5 * (1.0 + std::cos(M_PI * t))));
        const data::BatchLoader::Batch b = train_data.batch(i);
        const engine::Tensor x = engine::Tensor::view(device, b.x, b.size, features);
        engine::train_step(ctx, mlp, loss, *opt, x, b.y, train_metrics);
        bar.update(i + 1);
      }
    }
    const engine::EpochTimes times = ctx.end_epoch();
    const engine::MetricTotals tr = train_metrics.read(ctx);
    const engine::MetricTotals te = evaluate(ctx, mlp, loss, test_metrics, test_data);
    result.epochs.push_back(
        {tr.mean_loss(), tr.accuracy(), te.accuracy(), times.epoch_s, times.gemm_s});
    std::printf(
        "[%s] epoch %2d/%d  loss %.4f  train %6.2f%%  test %6.2f%%  epoch %.3f s  "
        "gemm %.3f s%s\n",
        variant.name, epoch, o.epochs, tr.mean_loss(), 100 * tr.accuracy(), 100 * te.accuracy(),
        times.epoch_s, times.gemm_s, times.gemm_untimed ? "  (some GEMMs untimed)" : "");
    std::fflush(stdout);
  }
  if (!o.save.empty()) {
    engine::save_checkpoint(ctx, o.save, mlp.parameters());
    std::cout << "saved " << o.save << "\n";
  }
  return result;
}

void print_table(const std::vector<RunResult>& runs) {
  const RunResult* naive = nullptr;
  for (const RunResult& r : runs)
    if (r.variant == "naive") naive = &r;
  std::printf("\n%-14s %10s %11s %10s %9s\n", "variant", "s/epoch", "GEMM share", "vs naive",
              "test acc");
  for (const RunResult& r : runs) {
    const std::string speedup =
        naive ? (std::ostringstream() << std::fixed << std::setprecision(2)
                                      << naive->mean_epoch_s() / r.mean_epoch_s() << "x")
                    .str()
              : "-";
    std::printf("%-14s %10.3f %10.1f%% %10s %8.2f%%\n", r.variant.c_str(), r.mean_epoch_s(),
                100 * r.mean_gemm_s() / r.mean_epoch_s(), speedup.c_str(),
                100 * r.epochs.back().test_acc);
  }
}

// CSV, or JSON when the name ends in .json.
void write_results(const std::string& path, const std::vector<RunResult>& runs) {
  const RunResult* naive = nullptr;
  for (const RunResult& r : runs)
    if (r.variant == "naive") naive = &r;
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write results to " + path);
  const bool json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  f << std::setprecision(6);
  if (json)
    f << "[\n";
  else
    f << "variant,s_per_epoch,gemm_s_per_epoch,gemm_share,speedup_vs_naive,final_test_acc\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunResult& r = runs[i];
    const double share = r.mean_gemm_s() / r.mean_epoch_s();
    const double speedup = naive ? naive->mean_epoch_s() / r.mean_epoch_s() : 0.0;
    if (json) {
      f << "  {\"variant\": \"" << r.variant << "\", \"s_per_epoch\": " << r.mean_epoch_s()
        << ", \"gemm_s_per_epoch\": " << r.mean_gemm_s() << ", \"gemm_share\": " << share
        << ", \"speedup_vs_naive\": " << (naive ? std::to_string(speedup) : "null")
        << ", \"final_test_acc\": " << r.epochs.back().test_acc << "}"
        << (i + 1 < runs.size() ? ",\n" : "\n");
    } else {
      f << r.variant << "," << r.mean_epoch_s() << "," << r.mean_gemm_s() << "," << share << ","
        << (naive ? std::to_string(speedup) : "") << "," << r.epochs.back().test_acc << "\n";
    }
  }
  if (json) f << "]\n";
  if (!f) throw std::runtime_error("writing results to " + path + " failed");
}

int run(const Options& o) {
  if (o.epochs < 1 || o.batch < 1) throw std::runtime_error("--epochs and --batch must be >= 1");
  if (o.optimizer != "sgd" && o.optimizer != "adam")
    throw std::runtime_error("--optimizer must be sgd or adam, got '" + o.optimizer + "'");

  engine::Device device = engine::Device::CPU;
  if (o.device == "cuda") {
    if (!gemm::cuda_device_available())
      throw std::runtime_error("--device cuda, but no usable CUDA device was found");
    device = engine::Device::CUDA;
  } else if (o.device == "auto") {
    if (gemm::cuda_device_available())
      device = engine::Device::CUDA;
    else
      std::cout << "No GPU found: running on the CPU (OpenBLAS).\n";
  } else if (o.device != "cpu") {
    throw std::runtime_error("--device must be auto, cpu or cuda, got '" + o.device + "'");
  }
  const bool cuda = device == engine::Device::CUDA;

  // The variants to run. TF32 variants are never picked implicitly: only when named.
  std::vector<const gemm::Variant*> variants;
  if (o.compare) {
    if (!cuda) throw std::runtime_error("--compare compares GPU variants and needs a CUDA device");
    if (!o.save.empty()) throw std::runtime_error("--save is for a single run, not --compare");
    for (const std::string& name : o.compare_extra) gemm::find_variant(name);  // check names
    for (const gemm::Variant& v : gemm::variants()) {
      const bool named = std::find(o.compare_extra.begin(), o.compare_extra.end(), v.name) !=
                         o.compare_extra.end();
      if (v.memory != gemm::Memory::Device) {
        if (named)
          throw std::runtime_error(std::string("--compare: '") + v.name +
                                   "' is a host variant; --compare runs on the GPU");
        continue;
      }
      if (v.precision == gemm::Precision::FP32 || named) variants.push_back(&v);
    }
  } else {
    const gemm::Variant& v = gemm::find_variant(o.gemm.empty() ? (cuda ? "vec" : "cpu") : o.gemm);
    if ((v.memory == gemm::Memory::Device) != cuda)
      throw std::runtime_error(std::string("--gemm ") + v.name + " runs on the " +
                               (v.memory == gemm::Memory::Device ? "GPU" : "host") +
                               ", but training runs on " + (cuda ? "the GPU" : "the CPU") +
                               (cuda ? " (use a device variant)" : " (use --gemm cpu)"));
    variants.push_back(&v);
  }
  for (const gemm::Variant* v : variants)  // e.g. wgmma on a GPU other than Hopper
    if (cuda)
      if (const char* why = gemm::unavailable_reason(*v)) throw std::runtime_error(why);

  data::Dataset train_set = data::load_mnist(o.data_dir, data::Split::Train);
  const data::Dataset test_set = data::load_mnist(o.data_dir, data::Split::Test);
  if (o.train_limit < 0) throw std::runtime_error("--train-limit must be >= 0");
  if (o.train_limit > 0 && o.train_limit < train_set.count) {
    train_set.count = o.train_limit;
    train_set.images.resize(static_cast<size_t>(o.train_limit) * train_set.features());
    train_set.labels.resize(static_cast<size_t>(o.train_limit));
  }

  std::vector<RunResult> runs;
  for (const gemm::Variant* v : variants) runs.push_back(train(o, device, *v, train_set, test_set));
  if (o.compare) print_table(runs);
  if (!o.results.empty()) {
    write_results(o.results, runs);
    std::cout << "results written to " << o.results << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Train an MLP on MNIST; every matrix product runs on the chosen GEMM variant."};
  std::string variant_list;
  for (const gemm::Variant& v : gemm::variants())
    variant_list += std::string("\n  ") + v.name + ": " + v.summary;
  app.add_option("--gemm", o.gemm,
                 "GEMM variant (default vec on CUDA, cpu on the CPU):" + variant_list);
  auto* compare = app.add_option("--compare", o.compare_extra,
                                 "Train with every FP32 device variant, plus any listed "
                                 "(e.g. cublas_tf32), and print a table")
                      ->expected(0, CLI::detail::expected_max_vector_size)
                      ->delimiter(',');
  app.add_option("--results", o.results, "Also write the results as CSV (or JSON: *.json)");
  app.add_option("--epochs", o.epochs, "Epochs")->capture_default_str();
  app.add_option("--batch", o.batch, "Batch size")->capture_default_str();
  app.add_option("--hidden", o.hidden, "Hidden layer sizes, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--lr", o.lr,
                 "Peak learning rate, decayed to 0 by a cosine over the run "
                 "(default 0.1 for sgd, 1e-3 for adam)");
  app.add_option("--optimizer", o.optimizer, "sgd or adam")->capture_default_str();
  app.add_option("--momentum", o.momentum, "SGD momentum")->capture_default_str();
  app.add_option("--weight-decay", o.weight_decay, "L2 weight decay")->capture_default_str();
  app.add_option("--seed", o.seed, "Seed for initialisation and shuffling")->capture_default_str();
  app.add_option("--data-dir", o.data_dir, "MNIST directory (scripts/fetch_mnist.sh fills it)")
      ->capture_default_str();
  app.add_option("--device", o.device, "auto, cpu or cuda")->capture_default_str();
  app.add_option("--train-limit", o.train_limit, "Use only the first N training examples");
  app.add_option("--save", o.save, "Write the trained parameters to this checkpoint");
  CLI11_PARSE(app, argc, argv);
  o.compare = compare->count() > 0;
  // A bare --compare leaves one empty value behind.
  o.compare_extra.erase(std::remove(o.compare_extra.begin(), o.compare_extra.end(), ""),
                        o.compare_extra.end());

  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "train_mlp: error: " << e.what() << "\n";
    return 1;
  }
}
