// One variant's training run in train_mlp (train.h): the epoch loop, a stop's save, and the checks
// and report after each epoch.
#include "apps/train_mlp/train.h"

#include <cmath>
#include <csignal>
#include <cstdio>
#include <functional>
#include <iostream>
#include <optional>
#include <string>

#include "apps/train_mlp/epoch.h"
#include "apps/train_mlp/step_graph.h"
#include "apps/train_mlp/stop.h"
#include "data/loader.h"
#include "models/mlp.h"

namespace {

// Saves the run with its epoch's metadata (and `extra`): the model and the optimiser state.
using SaveCheckpoint = std::function<void(int epoch, const engine::Metadata& extra)>;

std::string exact(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

// The line that opens a variant's run: the model, the device, the data and how a step runs.
void print_run_line(const Options& o, engine::Device device, const char* variant,
                    const std::string& layers, int examples, int batches) {
  std::cout << "[" << variant << "] " << layers << " on " << engine::device_name(device) << ", "
            << examples << " training examples, " << batches << " batches of " << o.batch << ", "
            << o.optimizer
            << (device == engine::Device::CUDA
                    ? std::string(o.no_graph ? ", launch by launch" : ", one CUDA graph per step") +
                          (o.serial_step ? ", serial step" : "") +
                          (o.no_dependent_launch ? ", no dependent launch" : "")
                    : "")
            << "\n";
}

// A signal stopped the epoch after `done` of its steps: saves the point reached (when there is a
// --save and something new since saved_at, its epoch's totals so far in the metadata), prints how
// to resume, and throws Stopped.
[[noreturn]] void stop_in_epoch(const Options& o, engine::Trainer& trainer, int epoch, int done,
                                int batches, int64_t saved_at, const EpochCarry& carried,
                                const engine::EpochTimes& times, bool gemm_profiled,
                                const SaveCheckpoint& save) {
  const char* name = stop_signal() == SIGINT ? "SIGINT" : "SIGTERM";
  std::cout << "stopped by " << name << " after " << done << " of epoch " << epoch << "'s "
            << batches << " steps; ";
  if (o.save.empty()) {
    std::cout << "nothing saved (no --save)\n";
  } else if (trainer.steps() == saved_at) {  // nothing new since the last save
    note_stop_checkpoint_complete();
    std::cout << o.save << " holds this point already\nresume with: " << resume_command(o) << "\n";
  } else if (trainer.steps() == 0) {
    std::cout << "no step was taken, nothing saved\n";
  } else {
    const engine::MetricTotals so_far = trainer.peek_metrics();  // NonFiniteLoss: not saved
    const double gemm_s = gemm_profiled ? 0.0 : times.gemm_s;
    const engine::MetricTotals& c = carried.totals;
    save(epoch - 1, {{"epoch_loss_sum", exact(c.loss_sum + so_far.loss_sum)},
                     {"epoch_correct", std::to_string(c.correct + so_far.correct)},
                     {"epoch_seen", std::to_string(c.seen + so_far.seen)},
                     {"epoch_seconds", exact(carried.seconds + times.epoch_s)},
                     {"epoch_gemm_seconds", exact(carried.gemm_seconds + gemm_s)}});
    note_stop_checkpoint_complete();
    std::cout << "saved " << o.save << " and " << engine::optimizer_state_path(o.save)
              << "\nresume with: " << resume_command(o) << "\n";
  }
  std::fflush(stdout);
  throw Stopped{stop_signal()};
}

// After an epoch's training steps, whose loss the trainer found finite (else NonFiniteLoss): no
// non-finite parameter (else Diverged).
void require_finite_parameters(engine::Context& ctx, engine::Trainer& trainer, int epoch) {
  for (float v : trainer.optimizer().values().download(ctx.stream()))
    if (!std::isfinite(v))
      throw Diverged("a parameter became non-finite in epoch " + std::to_string(epoch));
}

}  // namespace

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
  // Where this process starts, and a mid-epoch save's totals of its epoch so far.
  StartPoint start;
  if (resumed)  // parameters, optimiser state and step count: the run continues
    start = continue_run(o, ctx, mlp, trainer, *resumed, train_set.count, batches);
  EpochCarry& carried = start.carried;
  std::vector<EpochLog>& history = start.history;

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

  print_run_line(o, device, variant.name, mlp.layer_sizes(), train_set.count, batches);
  const SaveCheckpoint save = [&](int epoch, const engine::Metadata& extra) {
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
  // The trainer's NonFiniteLoss (a step's loss NaN or infinite: engine/network/trainer.h), the one
  // check of the loss, names the steps; Diverged adds the epoch and makes it exit status 3.
  int epoch = start.first_epoch;
  try {
    for (; epoch <= o.epochs; ++epoch) {
      const int first = epoch == start.first_epoch ? start.first_step : 0;
      ctx.begin_epoch();
      train_data.begin_epoch(epoch);
      int done;
      {
        Progress progress(trainer, variant.name, epoch, batches, o.log_interval, o.log_seconds,
                          first);
        done = run_epoch(trainer, train_data, x, y, &progress, first);
      }
      const engine::EpochTimes times = ctx.end_epoch();
      if (done < batches)  // stopped by a signal, between two steps
        stop_in_epoch(o, trainer, epoch, done, batches, saved_at, carried, times,
                      profiled_gemm_s >= 0, save);
      engine::MetricTotals tr = trainer.take_metrics();
      // The epoch's steps before a resumed mid-epoch save count too (for the first epoch only).
      tr.loss_sum += carried.totals.loss_sum;
      tr.correct += carried.totals.correct;
      tr.seen += carried.totals.seen;
      const double epoch_s = times.epoch_s + carried.seconds,
                   cpu_gemm_s = times.gemm_s + carried.gemm_seconds;
      carried = {};
      require_finite_parameters(ctx, trainer, epoch);
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
  } catch (const engine::NonFiniteLoss& e) {
    throw Diverged("the loss became non-finite in epoch " + std::to_string(epoch) + " (" +
                   (e.first_step == e.last_step ? "step " + std::to_string(e.first_step)
                                                : "steps " + std::to_string(e.first_step) + " to " +
                                                      std::to_string(e.last_step)) +
                   ")");
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
