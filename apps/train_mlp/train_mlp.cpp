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
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/train_mlp/options.h"
#include "apps/train_mlp/report.h"
#include "data/loader.h"
#include "data/mnist.h"
#include "engine/engine.h"
#include "kernels/cuda_check.h"
#include "models/mlp.h"

namespace {

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
    engine::Trainer profiler(ctx, scratch, trainer_options(o, total_steps, true));
    ctx.set_graph_gemm_timing(true);
    loader.begin_epoch(0);
    double replayed_s = 0.0;
    int replays = 0;
    for (int i = 0; i < loader.count() / o.batch; ++i) {  // the full batches
      profiler.step(x, y, gather);
      if (!profiler.graph_active()) continue;
      try {
        replayed_s += ctx.graph_gemm_seconds();  // waits for the replay
      } catch (const gemm_mlp::Error& e) {       // e.g. a driver that cannot time events in a graph
        std::cout << "[" << variant << "] note: " << e.what() << "; timing GEMMs one by one\n";
        replays = 0;
        break;
      }
      ++replays;
    }
    ctx.set_graph_gemm_timing(false);
    if (replays > 0) return replayed_s / replays * loader.count() / o.batch;
  }
  models::MLP scratch(ctx, features, o.hidden, classes);
  engine::Trainer profiler(ctx, scratch, trainer_options(o, total_steps, false));
  loader.begin_epoch(0);
  profiler.step(x, y, gather);  // untimed: the first launch of each kernel loads it
  ctx.begin_epoch();
  run_epoch(profiler, loader, x, y, nullptr);
  return ctx.end_epoch().gemm_s;
}

RunResult train(const Options& o, engine::Device device, const gemm::Variant& variant,
                const data::Dataset& train_set, const data::Dataset& test_set) {
  engine::Context ctx(device, variant, o.seed);
  data::BatchLoader train_data(train_set, o.batch, o.seed, device, false, ctx.stream());
  data::BatchLoader test_data(test_set, o.batch, o.seed, device, false, ctx.stream());
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
  engine::Trainer trainer(ctx, mlp, trainer_options(o, total_steps, !o.no_graph));
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

// --eval: the checkpoint's test loss and accuracy.
int evaluate_checkpoint(const Options& o, engine::Device device) {
  const data::Dataset test_set = data::load_mnist(o.data_dir, data::Split::Test);
  engine::Context ctx(device, o.seed);
  models::MLP mlp(ctx, test_set.features(), o.hidden, test_set.classes);
  engine::TrainerOptions t = trainer_options(o, 0, false);
  engine::Trainer trainer(ctx, mlp, t);
  engine::load_checkpoint(ctx, o.eval, mlp.parameters());
  data::BatchLoader test_data(test_set, o.batch, o.seed, device, false, ctx.stream());
  const engine::MetricTotals te = trainer.evaluate(
      engine::Tensor::view(device, test_data.all_images(), test_data.count(), test_set.features()),
      engine::LabelTensor::view(device, test_data.all_labels(), test_data.count()));
  std::printf("%s (%s): test loss %.4f  test accuracy %.2f%% (%lld images)\n", o.eval.c_str(),
              mlp.layer_sizes().c_str(), te.mean_loss(), 100 * te.accuracy(),
              static_cast<long long>(te.seen));
  return 0;
}

int run(Options o) {
  complete_options(o);
  const engine::Device device = gemm_mlp::resolve_device(o.device, "--device");
  if (o.device == "auto" && device == engine::Device::CPU)
    std::cout << "No GPU found: running on the CPU (OpenBLAS).\n";
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
      if (v.device != engine::Device::CUDA) {
        if (named)
          throw std::runtime_error(std::string("--compare: '") + v.name +
                                   "' is a host variant; --compare runs on the GPU");
        continue;
      }
      if (v.precision == gemm::Precision::FP32 || named) variants.push_back(&v);
    }
  } else {
    const gemm::Variant& v = gemm::find_variant(o.gemm.empty() ? (cuda ? "vec" : "cpu") : o.gemm);
    if ((v.device == engine::Device::CUDA) != cuda)
      throw std::runtime_error(std::string("--gemm ") + v.name + " runs on the " +
                               (v.device == engine::Device::CUDA ? "GPU" : "host") +
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
  if (const std::optional<int> status = parse_options(argc, argv, o)) return *status;
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
