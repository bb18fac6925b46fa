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
// --step-graph writes the captured step's kernels and dependencies as JSON (step_graph.h).
//
// Timing: an epoch's time runs from its first shuffle to its last optimiser step, as the device
// saw it (CUDA events); evaluation of the test set is outside it. Before the first epoch, one
// untimed, profiled epoch on a scratch copy of the model loads every kernel and cuBLAS and
// measures an epoch's GEMM time (epoch.h); the timed epochs record no per-GEMM events.
//
// Stopping (SIGINT, SIGTERM): apps/train_mlp/stop.h.
#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/common/parse_number.h"
#include "apps/train_mlp/epoch.h"
#include "apps/train_mlp/options.h"
#include "apps/train_mlp/report.h"
#include "apps/train_mlp/step_graph.h"
#include "apps/train_mlp/stop.h"
#include "data/loader.h"
#include "data/mnist.h"
#include "engine/engine.h"
#include "base/cuda_check.h"
#include "base/memory_limit.h"
#include "models/mlp.h"

namespace {

double metadata_number(const engine::Metadata& m, const std::string& path, const char* key) {
  const auto it = m.find(key);
  const std::optional<double> v =
      it == m.end() ? std::nullopt : apps::finite_decimal_value(it->second);
  if (!v || *v < 0)
    throw std::runtime_error("checkpoint " + path + ": its metadata has no '" + key +
                             "' that is a finite number >= 0 (a save made in mid-epoch has one)");
  return *v;
}

// What --resume found before any work: the save it continues from, and the --history rows of the
// epochs before it.
struct Resumed {
  engine::ResumePoint point;
  int epoch = 0;  // the last completed epoch
  std::vector<EpochLog> history;
};

std::string exact(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

RunResult train(const Options& o, engine::Device device, const gemm::Variant& variant,
                const data::Dataset& train_set, const data::Dataset& test_set,
                const Resumed* resumed) {
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
  int first_epoch = 1, first_step = 0;  // where this process starts: step first_step of the epoch
  engine::MetricTotals carried;         // a mid-epoch save's totals of its epoch so far
  double carried_s = 0, carried_gemm_s = 0;
  std::vector<EpochLog> history;
  if (resumed) {  // parameters, optimiser state and step count: the run continues
    const engine::ResumePoint point =
        engine::load_training_checkpoint(ctx, o.resume, mlp.parameters(), trainer.optimizer());
    if (point.metadata.at("save_id") != resumed->point.metadata.at("save_id"))
      throw std::runtime_error("--resume " + o.resume + ": changed while this run started");
    trainer.resume_from_optimizer();
    const auto examples = point.metadata.find("examples");
    if (examples != point.metadata.end() && examples->second != std::to_string(train_set.count))
      throw std::runtime_error("--resume " + o.resume + ": the run trained on " + examples->second +
                               " examples an epoch; the data here (" + o.data_dir +
                               ", --train-limit " + std::to_string(o.train_limit) + ") has " +
                               std::to_string(train_set.count));
    first_epoch = resumed->epoch + 1;
    const int64_t into = trainer.steps() - static_cast<int64_t>(resumed->epoch) * batches;
    if (into < 0 || into >= batches)
      throw std::runtime_error("--resume " + o.resume + ": step " +
                               std::to_string(trainer.steps()) + " does not fall in epoch " +
                               std::to_string(first_epoch) + " of " + std::to_string(batches) +
                               " steps");
    first_step = static_cast<int>(into);
    if (first_step > 0) {  // the optimiser file's save, made in mid-epoch
      const engine::Metadata& m = point.metadata;
      const std::string from = engine::optimizer_state_path(o.resume);
      carried.loss_sum = metadata_number(m, from, "epoch_loss_sum");
      carried.correct = engine::metadata_count(m, from, "epoch_correct");
      carried.seen = engine::metadata_count(m, from, "epoch_seen");
      carried_s = metadata_number(m, from, "epoch_seconds");
      carried_gemm_s = metadata_number(m, from, "epoch_gemm_seconds");
    }
    history = resumed->history;
    if (!point.note.empty()) std::cout << "note: " << point.note << "\n";
    std::cout << "resumed from " << engine::optimizer_state_path(o.resume) << " (save "
              << point.metadata.at("save_id") << " of run " << o.run_id << "): after epoch "
              << resumed->epoch;
    if (first_step > 0)
      std::cout << " and " << first_step << " of epoch " << first_epoch << "'s " << batches
                << " steps";
    std::cout << "\n";
  }

  // On the GPU, before the timed epochs: an untimed, profiled epoch (profile_gemm_seconds). The
  // timed epochs then record no per-GEMM events. On the CPU each GEMM is timed in place.
  double profiled_gemm_s = -1.0;
  if (device == engine::Device::CUDA) {
    profiled_gemm_s = profile_gemm_seconds(o, ctx, train_data, x, y, features, classes, total_steps,
                                           variant.name);
    ctx.set_gemm_timing(false);
  }
  std::optional<StepGraphRecorder> step_graph;  // the real trainer's capture, not the profiler's
  if (!o.step_graph.empty()) step_graph.emplace(ctx);

  std::cout << "[" << variant.name << "] " << mlp.layer_sizes() << " on "
            << engine::device_name(device) << ", " << train_set.count << " training examples, "
            << batches << " batches of " << o.batch << ", " << o.optimizer
            << (device == engine::Device::CUDA
                    ? std::string(o.no_graph ? ", launch by launch" : ", one CUDA graph per step") +
                          (o.serial_step ? ", serial step" : "") +
                          (o.no_dependent_launch ? ", no dependent launch" : "")
                    : "")
            << "\n";
  const auto save = [&](int epoch, const engine::Metadata& extra) {
    engine::Metadata m = run_metadata(o, mlp.layer_sizes(), variant.name, epoch);
    m.insert(extra.begin(), extra.end());
    m["examples"] = std::to_string(train_set.count);  // an epoch's, which resuming needs the same
    engine::save_training_checkpoint(ctx, o.save, mlp.parameters(), trainer.optimizer(), m);
  };
  RunResult result;
  result.variant = variant.name;
  bool graph_noted = false;
  // The step count of the last save to o.save (the resumed one, when it is the same file).
  int64_t saved_at = resumed && o.save == o.resume ? trainer.steps() : -1;
  for (int epoch = first_epoch; epoch <= o.epochs; ++epoch) {
    const int first = epoch == first_epoch ? first_step : 0;
    ctx.begin_epoch();
    train_data.begin_epoch(epoch);
    int done;
    {
      Progress progress(trainer, variant.name, epoch, batches, o.log_interval, first);
      done = run_epoch(trainer, train_data, x, y, &progress, first);
    }
    const engine::EpochTimes times = ctx.end_epoch();
    if (done < batches) {  // stopped by a signal, between two steps
      const char* name = stop_signal() == SIGINT ? "SIGINT" : "SIGTERM";
      std::cout << "stopped by " << name << " after " << done << " of epoch " << epoch << "'s "
                << batches << " steps; ";
      if (o.save.empty()) {
        std::cout << "nothing saved (no --save)\n";
      } else if (trainer.steps() == saved_at) {  // nothing new since the last save
        std::cout << o.save << " holds this point already\nresume with: " << resume_command(o)
                  << "\n";
      } else if (trainer.steps() == 0) {
        std::cout << "no step was taken, nothing saved\n";
      } else {
        const engine::MetricTotals so_far = trainer.peek_metrics();
        if (!std::isfinite(so_far.loss_sum))
          throw Diverged("the loss became non-finite in epoch " + std::to_string(epoch));
        const double gemm_s = profiled_gemm_s >= 0 ? 0.0 : times.gemm_s;
        save(epoch - 1, {{"epoch_loss_sum", exact(carried.loss_sum + so_far.loss_sum)},
                         {"epoch_correct", std::to_string(carried.correct + so_far.correct)},
                         {"epoch_seen", std::to_string(carried.seen + so_far.seen)},
                         {"epoch_seconds", exact(carried_s + times.epoch_s)},
                         {"epoch_gemm_seconds", exact(carried_gemm_s + gemm_s)}});
        std::cout << "saved " << o.save << " and " << engine::optimizer_state_path(o.save)
                  << "\nresume with: " << resume_command(o) << "\n";
      }
      std::fflush(stdout);
      throw Stopped{stop_signal()};
    }
    engine::MetricTotals tr = trainer.take_metrics();
    // The epoch's steps before a resumed mid-epoch save count too (for the first epoch only).
    tr.loss_sum += carried.loss_sum, tr.correct += carried.correct, tr.seen += carried.seen;
    const double epoch_s = times.epoch_s + carried_s, cpu_gemm_s = times.gemm_s + carried_gemm_s;
    carried = {}, carried_s = carried_gemm_s = 0;
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
    const double gemm_s = profiled_gemm_s >= 0 ? profiled_gemm_s : cpu_gemm_s;
    result.epochs.push_back(
        {epoch, tr.mean_loss(), tr.accuracy(), te.accuracy(), trainer.lr(), epoch_s, gemm_s});
    history.push_back(result.epochs.back());
    if (!o.history.empty()) write_history(o.history, history, o.run_id);
    std::printf("[%s] epoch %2d/%d  loss %.6f  train %6.2f%%  test %6.2f%%  epoch %.4f s\n",
                variant.name, epoch, o.epochs, tr.mean_loss(), 100 * tr.accuracy(),
                100 * te.accuracy(), epoch_s);
    std::fflush(stdout);
    if (!o.save.empty()) {  // after every epoch, so that an interrupted run can be resumed
      save(epoch, {});
      saved_at = trainer.steps();
    }
  }
  std::printf("[%s] GEMM time per epoch %.4f s%s\n", variant.name, result.mean_gemm_s(),
              profiled_gemm_s >= 0 ? " (measured in a separate, profiled epoch)" : "");
  if (step_graph)
    step_graph->write(o.step_graph, {{"variant", variant.name}, {"model", mlp.layer_sizes()}},
                      o.batch, trainer.graph_note());
  if (!o.save.empty())
    std::cout << "saved " << o.save << " (and its optimiser state, "
              << engine::optimizer_state_path(o.save) << ")\n";
  return result;
}

// The model's memory from the flags' sizes, before anything is allocated: its parameters, their
// gradients and the optimiser's buffers (one for SGD, two for Adam), 4 bytes each, and on the GPU
// twice that (the profiling pass trains a scratch copy); at most the GPU's memory, or the host's.
void require_model_fits(const Options& o, int features, int classes, engine::Device device) {
  const double parameters = models::mlp_parameter_count(features, o.hidden, classes);
  const double bytes =
      parameters * 4 * (o.optimizer == "adam" ? 4 : 3) * (device == engine::Device::CUDA ? 2 : 1);
  std::string hidden;
  for (int h : o.hidden) hidden += (hidden.empty() ? "" : ",") + std::to_string(h);
  char count[32];
  std::snprintf(count, sizeof count, "%.3g", parameters);
  const std::string what = "--hidden " + hidden + ": the model " +
                           models::MlpSizes{features, o.hidden, classes}.text() + " has " + count +
                           " parameters; with their gradients and optimiser state, it";
  const uint64_t needed = bytes < 1.8e19 ? static_cast<uint64_t>(bytes) : UINT64_MAX;
  if (device == engine::Device::CUDA)
    gemm_mlp::check_device_allocation(needed, what);
  else
    gemm_mlp::check_host_allocation(needed, what);
}

// --eval: the checkpoint's test loss and accuracy. The layer sizes come from its tensors' shapes
// (complete_options); they must fit the data's images and classes before the model is built.
int evaluate_checkpoint(const Options& o, engine::Device device) {
  const data::Dataset test_set = data::load_mnist(o.data_dir, data::Split::Test);
  const models::MlpSizes sizes =
      models::mlp_sizes(o.eval, engine::safetensors::read_header(o.eval));
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
  require_model_fits(o, sizes.inputs, sizes.classes, device);
  engine::Context ctx(device, o.seed);
  models::MLP mlp(ctx, sizes.inputs, sizes.hidden, sizes.classes);
  engine::TrainerOptions t = trainer_options(o, 0, false);
  engine::Trainer trainer(ctx, mlp, t);
  engine::load_checkpoint(ctx, o.eval, mlp.parameters());
  data::BatchLoader test_data(test_set, o.batch, o.seed, device, false, ctx.stream());
  const engine::MetricTotals te = trainer.evaluate(
      engine::Tensor::view(device, test_data.all_images(), test_data.count(), test_set.features()),
      engine::LabelTensor::view(device, test_data.all_labels(), test_data.count()));
  std::printf("%s (%s) on %s (%s): test loss %.4f  test accuracy %.2f%% (%lld images)\n",
              o.eval.c_str(), mlp.layer_sizes().c_str(), o.dataset.c_str(), o.data_dir.c_str(),
              te.mean_loss(), 100 * te.accuracy(), static_cast<long long>(te.seen));
  return 0;
}

// A loss that explodes but stays finite (Adam at --lr 1e6 ends near 1e14) passes the non-finite
// checks. A model that has learned nothing and gives every class the same probability scores
// ln(classes); a last epoch's mean loss above twice that is far worse than knowing nothing. A
// working run ends well below ln(classes) (a first epoch on a few examples may end just above it).
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

int run(Options o) {
  complete_options(o);
  const engine::Device device = gemm_mlp::resolve_device(o.device, "--device");
  if (o.device == "auto" && device == engine::Device::CPU)
    std::cout << "No GPU found: running on the CPU (OpenBLAS).\n";
  const bool cuda = device == engine::Device::CUDA;
  if (!o.eval.empty()) return evaluate_checkpoint(o, device);
  if (!o.step_graph.empty() && !cuda)
    throw std::runtime_error("--step-graph writes the step's CUDA graph; this run is on the CPU");

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
    const std::string name = o.gemm.empty() ? (cuda ? "vec" : "cpu") : o.gemm;
    const gemm::Variant* found = nullptr;
    try {
      found = &gemm::find_variant(name);
    } catch (const gemm_mlp::Error&) {
      if (o.resume.empty() || o.given.count("--gemm")) throw;
      throw std::runtime_error("--resume " + o.resume + ": the run used GEMM variant '" + name +
                               "', which this build does not have; give --gemm");
    }
    const gemm::Variant& v = *found;
    if ((v.device == engine::Device::CUDA) != cuda && !o.resume.empty() && !o.given.count("--gemm"))
      throw std::runtime_error(
          "--resume " + o.resume + ": the run used --gemm " + v.name + ", which runs on the " +
          (cuda ? "host, but training runs on the GPU: give --device cpu"
                : "GPU, but training runs on the CPU: run it on a GPU") +
          " to continue it as it was, or --gemm " + (cuda ? "with a device variant" : "cpu"));
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

  // --resume: the save it continues from (the pair checked), whether anything is left to train,
  // and the --history rows of the epochs before it.
  std::optional<Resumed> resumed;
  if (!o.resume.empty()) {
    resumed.emplace();
    resumed->point = engine::read_resume_point(o.resume);
    const engine::Metadata& m = resumed->point.metadata;
    const std::string from = engine::optimizer_state_path(o.resume);
    const auto epochs_in = [&](const char* key) {
      const int64_t n = engine::metadata_count(m, from, key);
      if (n > 1000000000)
        throw std::runtime_error("checkpoint " + from + ": " + key + " " + std::to_string(n) +
                                 " is more than 10^9");
      return static_cast<int>(n);
    };
    o.run_id = m.at("run_id");
    // The optimiser file's save is the one continued, its planned epochs too (the model file may
    // be from an earlier save, after a stop between a save's two renames).
    if (!o.given.count("--epochs")) o.epochs = epochs_in("epochs");
    resumed->epoch = epochs_in("epoch");
    if (o.epochs < resumed->epoch)
      throw std::runtime_error("--epochs " + std::to_string(o.epochs) + " is below the " +
                               std::to_string(resumed->epoch) + " epochs " + o.resume +
                               " was saved after; a run cannot be shortened");
    if (o.epochs == resumed->epoch) {
      std::cout << "nothing to train: " << o.resume << " was saved after epoch " << resumed->epoch
                << ", and --epochs is " << o.epochs
                << " (the run is complete; a larger --epochs extends it); nothing was written\n";
      return 0;
    }
    if (!o.history.empty()) {
      resumed->history = read_history(o.history, o.run_id);
      const int rows = static_cast<int>(resumed->history.size());
      if (rows == 0 && resumed->epoch > 0)
        std::cout << "note: --history " << o.history << " does not exist; it will hold epochs "
                  << resumed->epoch + 1 << " on\n";
      else if (rows < resumed->epoch)
        throw std::runtime_error("--history " + o.history + ": has " + std::to_string(rows) +
                                 " epochs of this run, not the " + std::to_string(resumed->epoch) +
                                 " it was saved after");
      if (rows > resumed->epoch) {  // written before a save that did not happen (a kill)
        std::cout << "note: --history " << o.history << ": dropping the rows of epochs "
                  << resumed->epoch + 1 << " to " << rows << ", which " << o.resume
                  << " does not hold\n";
        resumed->history.resize(static_cast<size_t>(resumed->epoch));
      }
    }
  } else {
    o.run_id = engine::random_identity();
  }

  data::Dataset train_set = data::load_mnist(o.data_dir, data::Split::Train);
  const data::Dataset test_set = data::load_mnist(o.data_dir, data::Split::Test);
  if (train_set.rows != test_set.rows || train_set.cols != test_set.cols)
    throw std::runtime_error("the training images are " + std::to_string(train_set.rows) + "x" +
                             std::to_string(train_set.cols) + ", the test images " +
                             std::to_string(test_set.rows) + "x" + std::to_string(test_set.cols));
  require_model_fits(o, train_set.features(), train_set.classes, device);
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
  for (const gemm::Variant* v : variants)
    runs.push_back(train(o, device, *v, train_set, test_set, resumed ? &*resumed : nullptr));
  for (const RunResult& r : runs) warn_if_loss_exploded(r, train_set.classes, o);
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
  install_stop_handlers(argc > 0 ? argv[0] : "train_mlp");
  gemm::set_dependent_launch(!o.no_dependent_launch);
  try {
    const int status = run(o);
    // A report that did not reach its file (e.g. a full disk) is an error, not a silent loss.
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      std::cerr << "train_mlp: error: writing the standard output failed\n";
      return 1;
    }
    return status;
  } catch (const Stopped& s) {
    return 128 + s.signal;
  } catch (const Diverged& e) {
    std::cerr << "train_mlp: training diverged: " << e.what()
              << "; no checkpoint was written for it (try a smaller --lr)\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "train_mlp: error: " << e.what() << "\n";
    return 1;
  }
}
