// train_mlp: trains an MLP on MNIST with every matrix product going through the chosen GEMM
// variant, and reports per-epoch time split into GEMM time and the rest.
//
//   train_mlp                          784-1024-1024-10, 10 epochs, SGD (lr 0.1, momentum 0.9,
//                                      weight decay 5e-4, cosine decay), --gemm vec
//   train_mlp --gemm naive --epochs 3
//   train_mlp --compare                every FP32 device variant, same model, same seed
//   train_mlp --compare cublas_tf32 --results out.json   ... plus the TF32 one, saved as JSON
//
// The step: engine::Trainer, which on CUDA captures the whole step (batch gather, forward, loss and
// metrics, backward, optimiser) once as a CUDA graph and replays it for every full batch;
// --no-graph runs the same kernels launch by launch, with the same results, bit for bit.
//
// Timing: an epoch's time runs from its first shuffle to its last optimiser step, as the device
// saw it (CUDA events); evaluation of the test set is outside it. Before the first epoch, one
// untimed, profiled epoch on a scratch copy of the model loads every kernel and cuBLAS and
// measures an epoch's GEMM time (see train()); the timed epochs record no per-GEMM events.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "apps/train_mlp/report.h"
#include "data/loader.h"
#include "data/mnist.h"
#include "engine/engine.h"
#include "kernels/cuda_check.h"
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
  std::string dataset = "mnist";
  std::string data_dir;  // empty: data/mnist or data/fashion-mnist, by the dataset
  std::string device = "auto";
  int train_limit = 0;  // 0: all
  std::string save;
  std::string resume;
  std::string eval;
  bool no_graph = false;
  std::string schedule = "cosine";
  std::string history;
  int log_interval = 0;
  std::set<std::string> given;  // the flags given on the command line, e.g. "--hidden"
};

// What a checkpoint's metadata records of the run that wrote it.
engine::Metadata run_metadata(const Options& o, const std::string& layers, const char* variant,
                              int epoch) {
  auto number = [](double v) {
    std::ostringstream s;
    s << std::setprecision(9) << v;
    return s.str();
  };
  std::string hidden;
  for (int h : o.hidden) hidden += (hidden.empty() ? "" : ",") + std::to_string(h);
  return {{"format", "gemm-mlp checkpoint 1"},
          {"layers", layers},
          {"hidden", hidden},
          {"dataset", o.dataset},
          {"variant", variant},
          {"epoch", std::to_string(epoch)},
          {"epochs", std::to_string(o.epochs)},
          {"batch", std::to_string(o.batch)},
          {"seed", std::to_string(o.seed)},
          {"optimizer", o.optimizer},
          {"lr", number(o.lr > 0               ? o.lr
                        : o.optimizer == "sgd" ? 0.1f
                                               : 1e-3f)},
          {"momentum", number(o.momentum)},
          {"weight_decay", number(o.weight_decay)},
          {"schedule", o.schedule}};
}

engine::TrainerOptions trainer_options(const Options& o, int classes, int64_t total_steps,
                                       bool cuda_graph) {
  if (o.schedule == "constant") total_steps = 0;
  engine::TrainerOptions t;
  t.max_batch = o.batch;
  t.classes = classes;
  t.cuda_graph = cuda_graph;
  if (o.optimizer == "sgd") {
    t.optimizer = engine::TrainerOptions::Optimizer::Sgd;
    t.sgd = {o.lr > 0 ? o.lr : 0.1f, o.momentum, o.weight_decay, total_steps};
  } else {
    t.optimizer = engine::TrainerOptions::Optimizer::Adam;
    t.adam.lr = o.lr > 0 ? o.lr : 1e-3f;
    t.adam.weight_decay = o.weight_decay;
    t.adam.cosine_steps = total_steps;
  }
  return t;
}

// One epoch of steps. The loader gathers each step's batch from the device-side step counter
// (BatchLoader::batch_at), so that a replayed graph gathers a new batch each time.
void run_epoch(engine::Trainer& trainer, data::BatchLoader& loader, const engine::Tensor& x,
               const engine::LabelTensor& y, Progress* progress) {
  const auto gather = [&loader](cudaStream_t, const int64_t* step) { loader.batch_at(step); };
  const int batches = loader.num_batches(), b = loader.batch_size();
  for (int i = 0; i < batches; ++i) {
    const int size = std::min(b, loader.count() - i * b);
    if (size == x.rows())
      trainer.step(x, y, gather);
    else  // the epoch's last, partial batch: the first rows of the same buffers
      trainer.step(x.first_rows(size), y.first(size), gather);
    if (progress) progress->update(i + 1);
  }
}

// The GEMM time of one epoch, measured on a scratch copy of the model (built after the real one,
// so the real one's initialisation does not depend on it); it also loads every kernel and cuBLAS
// before the timed epochs. The step is captured with CUDA event nodes around every GEMM and the
// intervals are read after each replay (a wait per step, which only this pass makes); an epoch's
// GEMM time is the mean replayed step's times the epoch's batches (the partial one counted by its
// share of rows). Without a graph (--no-graph, a capture that failed, or a driver that cannot time
// events in a graph) the GEMMs are timed one by one with events around each launch, which
// include launch gaps.
double profile_gemm_seconds(const Options& o, engine::Context& ctx, data::BatchLoader& loader,
                            const engine::Tensor& x, const engine::LabelTensor& y, int features,
                            int classes, int64_t total_steps, const char* variant) {
  const int gemms_per_step = 3 * static_cast<int>(o.hidden.size()) + 2;
  ctx.reserve_gemm_timers(gemms_per_step * loader.num_batches());
  const auto gather = [&loader](cudaStream_t, const int64_t* step) { loader.batch_at(step); };
  if (!o.no_graph) {
    models::MLP scratch(ctx, features, o.hidden, classes);
    engine::Trainer profiler(ctx, scratch, trainer_options(o, classes, total_steps, true));
    ctx.set_graph_gemm_timing(true);
    loader.begin_epoch(0);
    double replayed_s = 0.0;
    int replays = 0;
    try {
      for (int i = 0; i < loader.count() / o.batch; ++i) {  // the full batches
        profiler.step(x, y, gather);
        if (!profiler.graph_active()) continue;
        replayed_s += ctx.graph_gemm_seconds();  // waits for the replay
        ++replays;
      }
    } catch (const engine::Error& e) {
      std::cout << "[" << variant << "] note: " << e.what() << "; timing GEMMs one by one\n";
      replays = 0;
    }
    ctx.set_graph_gemm_timing(false);
    if (replays > 0) return replayed_s / replays * loader.count() / o.batch;
  }
  models::MLP scratch(ctx, features, o.hidden, classes);
  engine::Trainer profiler(ctx, scratch, trainer_options(o, classes, total_steps, false));
  loader.begin_epoch(0);
  profiler.step(x, y, gather);  // untimed: the first launch of each kernel loads it
  ctx.begin_epoch();
  run_epoch(profiler, loader, x, y, nullptr);
  return ctx.end_epoch().gemm_s;
}

RunResult train(const Options& o, engine::Device device, const gemm::Variant& variant,
                const data::Dataset& train_set, const data::Dataset& test_set) {
  engine::Context ctx(device, variant, o.seed);
  const auto where = device == engine::Device::CUDA ? data::BatchLoader::Where::Device
                                                    : data::BatchLoader::Where::Host;
  data::BatchLoader train_data(train_set, o.batch, o.seed, where, false, ctx.stream());
  data::BatchLoader test_data(test_set, o.batch, o.seed, where, false, ctx.stream());
  const int features = train_set.features(), classes = train_set.classes;
  const int batches = train_data.num_batches();
  const int64_t total_steps = static_cast<int64_t>(o.epochs) * batches;
  // Every step reads its input from the loader's one batch buffer.
  const data::BatchLoader::Batch buf = train_data.buffer();
  const engine::Tensor x = engine::Tensor::view(device, buf.x, buf.size, features);
  const engine::LabelTensor y = engine::LabelTensor::view(device, buf.y, buf.size);
  const engine::Tensor test_x =
      engine::Tensor::view(device, test_data.all_images(), test_data.count(), features);
  const engine::LabelTensor test_y =
      engine::LabelTensor::view(device, test_data.all_labels(), test_data.count());

  models::MLP mlp(ctx, features, o.hidden, classes);
  engine::Trainer trainer(ctx, mlp, trainer_options(o, classes, total_steps, !o.no_graph));
  int first_epoch = 1;
  if (!o.resume.empty()) {  // parameters, optimiser state and step count: the run continues
    const engine::Metadata m = engine::load_checkpoint(ctx, o.resume, mlp.parameters());
    engine::load_optimizer_state(ctx, engine::optimizer_state_path(o.resume), trainer.optimizer());
    trainer.resume_from_optimizer();
    first_epoch = std::stoi(m.at("epoch")) + 1;
    if (trainer.steps() != static_cast<int64_t>(first_epoch - 1) * batches)
      throw std::runtime_error("--resume: " + o.resume + " was saved after " +
                               std::to_string(trainer.steps()) +
                               " steps, not at the end of epoch " + m.at("epoch") + " of " +
                               std::to_string(batches) + " steps");
    std::cout << "resumed from " << o.resume << " after epoch " << first_epoch - 1 << "\n";
  }

  // On the GPU, before the timed epochs: an untimed, profiled epoch (profile_gemm_seconds). The
  // timed epochs then record no per-GEMM events. On the CPU each GEMM is timed in place.
  double profiled_gemm_s = -1.0;
  if (device == engine::Device::CUDA) {
    profiled_gemm_s = profile_gemm_seconds(o, ctx, train_data, x, y, features, classes, total_steps,
                                           variant.name);
    ctx.set_gemm_timing(false);
  }

  std::cout << "[" << variant.name << "] " << mlp.layer_sizes() << " on "
            << engine::device_name(device) << ", " << train_set.count << " training examples, "
            << batches << " batches of " << o.batch << ", " << o.optimizer
            << (device == engine::Device::CUDA
                    ? (o.no_graph ? ", launch by launch" : ", one CUDA graph per step")
                    : "")
            << "\n";
  RunResult result;
  result.variant = variant.name;
  bool graph_noted = false;
  for (int epoch = first_epoch; epoch <= o.epochs; ++epoch) {
    ctx.begin_epoch();
    train_data.begin_epoch(epoch);
    {
      Progress progress(trainer, variant.name, epoch, batches, o.log_interval);
      run_epoch(trainer, train_data, x, y, &progress);
    }
    const engine::EpochTimes times = ctx.end_epoch();
    const engine::MetricTotals tr = trainer.take_metrics();
    if (!std::isfinite(tr.loss_sum))
      throw Diverged("the loss became non-finite in epoch " + std::to_string(epoch));
    for (float v : trainer.optimizer().values().download(ctx.stream()))
      if (!std::isfinite(v))
        throw Diverged("a parameter became non-finite in epoch " + std::to_string(epoch));
    const engine::MetricTotals te = trainer.evaluate(test_x, test_y);
    if (!trainer.graph_note().empty() && !graph_noted) {
      std::cout << "[" << variant.name << "] note: " << trainer.graph_note() << "\n";
      graph_noted = true;
    }
    const double gemm_s = profiled_gemm_s >= 0 ? profiled_gemm_s : times.gemm_s;
    result.epochs.push_back(
        {epoch, tr.mean_loss(), tr.accuracy(), te.accuracy(), trainer.lr(), times.epoch_s, gemm_s});
    if (!o.history.empty()) write_history(o.history, result.epochs);
    std::printf("[%s] epoch %2d/%d  loss %.6f  train %6.2f%%  test %6.2f%%  epoch %.4f s\n",
                variant.name, epoch, o.epochs, tr.mean_loss(), 100 * tr.accuracy(),
                100 * te.accuracy(), times.epoch_s);
    std::fflush(stdout);
    if (!o.save.empty()) {  // after every epoch, so that an interrupted run can be resumed
      const engine::Metadata m = run_metadata(o, mlp.layer_sizes(), variant.name, epoch);
      engine::save_checkpoint(ctx, o.save, mlp.parameters(), m);
      engine::save_optimizer_state(ctx, engine::optimizer_state_path(o.save), trainer.optimizer(),
                                   m);
    }
  }
  std::printf("[%s] GEMM time per epoch %.4f s%s\n", variant.name, result.mean_gemm_s(),
              profiled_gemm_s >= 0 ? " (measured in a separate, profiled epoch)" : "");
  if (!o.save.empty())
    std::cout << "saved " << o.save << " (and its optimiser state, "
              << engine::optimizer_state_path(o.save) << ")\n";
  return result;
}

// A file the run will write: its folder must exist and be writable, checked before any work.
void require_writable(const std::string& flag, const std::string& path) {
  if (path.empty()) throw std::runtime_error(flag + " needs a file name, got ''");
  const size_t slash = path.find_last_of('/');
  const std::string dir =
      slash == std::string::npos ? "." : path.substr(0, std::max<size_t>(slash, 1));
  if (::access(dir.c_str(), W_OK) != 0)
    throw std::runtime_error(flag + " " + path + ": the folder " + dir +
                             " does not exist or is not writable");
}

// --resume and --eval take the model and the run's settings from the checkpoint; a flag given on
// the command line must agree with it.
void adopt_checkpoint(Options& o, const std::string& flag, const std::string& path) {
  const engine::Metadata m = engine::read_checkpoint_metadata(path);
  auto get = [&](const char* key) {
    const auto it = m.find(key);
    if (it == m.end())
      throw std::runtime_error(flag + " " + path + ": its metadata has no '" + key +
                               "' (not written by train_mlp?)");
    return it->second;
  };
  auto adopt = [&](const char* option, const char* key, auto& field, auto parse) {
    const auto value = parse(get(key));
    if (o.given.count(option) && field != value)
      throw std::runtime_error(flag + " " + path + ": the checkpoint has " + key + " " + get(key) +
                               ", which " + option + " contradicts");
    field = value;
  };
  const auto to_int = [](const std::string& v) { return std::stoi(v); };
  const auto to_float = [](const std::string& v) { return std::stof(v); };
  const auto to_u64 = [](const std::string& v) { return static_cast<uint64_t>(std::stoull(v)); };
  const auto same = [](const std::string& v) { return v; };
  const auto to_sizes = [](const std::string& v) {
    std::vector<int> sizes;
    std::stringstream in(v);
    for (std::string part; std::getline(in, part, ',');) sizes.push_back(std::stoi(part));
    return sizes;
  };
  adopt("--hidden", "hidden", o.hidden, to_sizes);
  adopt("--batch", "batch", o.batch, to_int);
  adopt("--seed", "seed", o.seed, to_u64);
  adopt("--optimizer", "optimizer", o.optimizer, same);
  adopt("--lr", "lr", o.lr, to_float);
  adopt("--momentum", "momentum", o.momentum, to_float);
  adopt("--weight-decay", "weight_decay", o.weight_decay, to_float);
  adopt("--schedule", "schedule", o.schedule, same);
  adopt("--dataset", "dataset", o.dataset, same);
  if (!o.given.count("--epochs")) o.epochs = to_int(get("epochs"));
}

// --eval: the checkpoint's test loss and accuracy.
int evaluate_checkpoint(const Options& o, engine::Device device) {
  const data::Dataset test_set = data::load_mnist(o.data_dir, data::Split::Test);
  engine::Context ctx(device, o.seed);
  models::MLP mlp(ctx, test_set.features(), o.hidden, test_set.classes);
  engine::TrainerOptions t = trainer_options(o, test_set.classes, 0, false);
  engine::Trainer trainer(ctx, mlp, t);
  engine::load_checkpoint(ctx, o.eval, mlp.parameters());
  const auto where = device == engine::Device::CUDA ? data::BatchLoader::Where::Device
                                                    : data::BatchLoader::Where::Host;
  data::BatchLoader test_data(test_set, o.batch, o.seed, where, false, ctx.stream());
  const engine::MetricTotals te = trainer.evaluate(
      engine::Tensor::view(device, test_data.all_images(), test_data.count(), test_set.features()),
      engine::LabelTensor::view(device, test_data.all_labels(), test_data.count()));
  std::printf("%s (%s): test loss %.4f  test accuracy %.2f%% (%lld images)\n", o.eval.c_str(),
              mlp.layer_sizes().c_str(), te.mean_loss(), 100 * te.accuracy(),
              static_cast<long long>(te.seen));
  return 0;
}

int run(Options o) {
  if (o.dataset != "mnist" && o.dataset != "fashion")
    throw std::runtime_error("--dataset must be mnist or fashion, got '" + o.dataset + "'");
  if (!o.resume.empty() && !o.eval.empty())
    throw std::runtime_error("--resume and --eval cannot be combined");
  if (!o.resume.empty()) adopt_checkpoint(o, "--resume", o.resume);
  if (!o.eval.empty()) adopt_checkpoint(o, "--eval", o.eval);
  if (o.data_dir.empty()) o.data_dir = o.dataset == "fashion" ? "data/fashion-mnist" : "data/mnist";
  if (o.given.count("--save")) require_writable("--save", o.save);
  if (o.given.count("--results")) require_writable("--results", o.results);
  if (o.given.count("--history")) require_writable("--history", o.history);
  if (o.log_interval < 0) throw std::runtime_error("--log-interval must be >= 0");
  if (o.epochs < 1 || o.batch < 1) throw std::runtime_error("--epochs and --batch must be >= 1");
  if (o.schedule != "cosine" && o.schedule != "constant")
    throw std::runtime_error("--schedule must be cosine or constant, got '" + o.schedule + "'");
  if (!(std::isfinite(o.lr) && o.lr >= 0.0f))
    throw std::runtime_error("--lr must be a finite number > 0");
  if (o.given.count("--lr") && o.lr == 0.0f) throw std::runtime_error("--lr must be > 0, got 0");
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
  if (!o.eval.empty()) return evaluate_checkpoint(o, device);

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

  // What the flags alone decide, before the data is read.
  if (o.train_limit < 0) throw std::runtime_error("--train-limit must be >= 0");
  for (int h : o.hidden)
    if (h < 1) throw std::runtime_error("--hidden sizes must be >= 1, got " + std::to_string(h));

  data::Dataset train_set = data::load_mnist(o.data_dir, data::Split::Train);
  const data::Dataset test_set = data::load_mnist(o.data_dir, data::Split::Test);
  if (train_set.rows != test_set.rows || train_set.cols != test_set.cols)
    throw std::runtime_error("the training images are " + std::to_string(train_set.rows) + "x" +
                             std::to_string(train_set.cols) + ", the test images " +
                             std::to_string(test_set.rows) + "x" + std::to_string(test_set.cols));
  if (o.train_limit > 0 && o.train_limit < train_set.count) {
    train_set.count = o.train_limit;
    train_set.images.resize(static_cast<size_t>(o.train_limit) * train_set.features());
    train_set.labels.resize(static_cast<size_t>(o.train_limit));
  }

  if (o.batch > train_set.count) {
    std::cout << "note: --batch " << o.batch << " is larger than the " << train_set.count
              << " training examples; using " << train_set.count << "\n";
    o.batch = train_set.count;
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
  std::string seed_text = "1";
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
  app.add_option("--schedule", o.schedule,
                 "cosine (decay to 0 over --epochs) or constant (then a run of N epochs resumed "
                 "for M more equals one of N + M)")
      ->capture_default_str();
  app.add_option("--optimizer", o.optimizer, "sgd or adam")->capture_default_str();
  app.add_option("--momentum", o.momentum, "SGD momentum")->capture_default_str();
  app.add_option("--weight-decay", o.weight_decay, "L2 weight decay")->capture_default_str();
  app.add_option("--seed", seed_text, "Seed for initialisation and shuffling, 0 .. 2^64-1")
      ->capture_default_str();
  app.add_option("--dataset", o.dataset,
                 "mnist or fashion (Fashion-MNIST: scripts/fetch_mnist.sh fashion)")
      ->capture_default_str();
  app.add_option("--data-dir", o.data_dir,
                 "The dataset's IDX files (default data/mnist or data/fashion-mnist; "
                 "scripts/fetch_mnist.sh fills them)");
  app.add_option("--device", o.device, "auto, cpu or cuda")->capture_default_str();
  app.add_option("--train-limit", o.train_limit, "Use only the first N training examples");
  app.add_option("--save", o.save,
                 "After every epoch, write the parameters to this safetensors checkpoint (and the "
                 "optimiser state beside it, as NAME.optim.safetensors)");
  app.add_option("--history", o.history,
                 "Write one row per epoch (epoch, loss, accuracies, lr, epoch and GEMM seconds) to "
                 "this CSV file (JSON: *.json), rewritten after every epoch");
  app.add_option("--log-interval", o.log_interval,
                 "Print a line every N steps (the only progress shown when the output is not a "
                 "terminal; each line waits for the device once)");
  app.add_option("--resume", o.resume,
                 "Continue the run saved in this checkpoint, to --epochs (default: the run's own)");
  app.add_option("--eval", o.eval, "Print the test loss and accuracy of this checkpoint, and exit");
  app.add_flag("--no-graph", o.no_graph,
               "Run each training step launch by launch instead of replaying one CUDA graph "
               "(same results, bit for bit; for comparison and debugging)");
  CLI11_PARSE(app, argc, argv);
  o.compare = compare->count() > 0;
  // A bare --compare leaves one empty value behind.
  o.compare_extra.erase(std::remove(o.compare_extra.begin(), o.compare_extra.end(), ""),
                        o.compare_extra.end());
  for (const CLI::Option* opt : app.get_options())
    if (opt->count() > 0) o.given.insert(opt->get_name());
  // Digits only, and at most 2^64 − 1: std::stoull alone would take "-1" as 2^64 − 1.
  errno = 0;
  char* end = nullptr;
  o.seed = std::strtoull(seed_text.c_str(), &end, 10);
  if (seed_text.empty() || seed_text.find_first_not_of("0123456789") != std::string::npos ||
      errno == ERANGE || *end != '\0') {
    std::cerr << "train_mlp: error: --seed must be an integer in 0 .. 18446744073709551615, got '"
              << seed_text << "'\n";
    return 1;
  }

  try {
    return run(o);
  } catch (const Diverged& e) {
    std::cerr << "train_mlp: training diverged: " << e.what()
              << "; no checkpoint was written for it (try a smaller --lr)\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "train_mlp: error: " << e.what() << "\n";
    return 1;
  }
}
