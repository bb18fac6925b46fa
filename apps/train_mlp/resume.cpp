// train_mlp's --resume: the checks before any work, and the continuation inside a run (resume.h).
#include "apps/train_mlp/resume.h"

#include <iostream>
#include <stdexcept>

#include "apps/common/parse_number.h"

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

}  // namespace

std::optional<Resumed> read_resumed(Options& o) {
  Resumed resumed;
  resumed.point = engine::read_resume_point(o.resume);
  const engine::Metadata& m = resumed.point.metadata;
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
  resumed.epoch = epochs_in("epoch");
  if (o.epochs < resumed.epoch)
    throw std::runtime_error("--epochs " + std::to_string(o.epochs) + " is below the " +
                             std::to_string(resumed.epoch) + " epochs " + o.resume +
                             " was saved after; a run cannot be shortened");
  if (o.epochs == resumed.epoch) {
    std::cout << "nothing to train: " << o.resume << " was saved after epoch " << resumed.epoch
              << ", and --epochs is " << o.epochs
              << " (the run is complete; a larger --epochs extends it); nothing was written\n";
    return std::nullopt;
  }
  if (!o.history.empty()) {
    resumed.history = read_history(o.history, o.run_id);
    const int rows = static_cast<int>(resumed.history.size());
    if (rows == 0 && resumed.epoch > 0)
      std::cout << "note: --history " << o.history << " does not exist; it will hold epochs "
                << resumed.epoch + 1 << " on\n";
    else if (rows < resumed.epoch)
      throw std::runtime_error("--history " + o.history + ": has " + std::to_string(rows) +
                               " epochs of this run, not the " + std::to_string(resumed.epoch) +
                               " it was saved after");
    if (rows > resumed.epoch) {  // written before a save that did not happen (a kill)
      std::cout << "note: --history " << o.history << ": dropping the rows of epochs "
                << resumed.epoch + 1 << " to " << rows << ", which " << o.resume
                << " does not hold\n";
      resumed.history.resize(static_cast<size_t>(resumed.epoch));
    }
  }
  return resumed;
}

StartPoint continue_run(const Options& o, engine::Context& ctx, models::MLP& mlp,
                        engine::Trainer& trainer, const Resumed& resumed, int examples,
                        int batches) {
  StartPoint start;
  const engine::ResumePoint point =
      engine::load_training_checkpoint(ctx, o.resume, mlp.parameters(), trainer.optimizer());
  if (point.metadata.at("save_id") != resumed.point.metadata.at("save_id"))
    throw std::runtime_error("--resume " + o.resume + ": changed while this run started");
  trainer.resume_from_optimizer();
  const auto saved_examples = point.metadata.find("examples");
  if (saved_examples != point.metadata.end() && saved_examples->second != std::to_string(examples))
    throw std::runtime_error("--resume " + o.resume + ": the run trained on " +
                             saved_examples->second + " examples an epoch; the data here (" +
                             o.data_dir + ", --train-limit " + std::to_string(o.train_limit) +
                             ") has " + std::to_string(examples));
  start.first_epoch = resumed.epoch + 1;
  const int64_t into = trainer.steps() - static_cast<int64_t>(resumed.epoch) * batches;
  if (into < 0 || into >= batches)
    throw std::runtime_error("--resume " + o.resume + ": step " + std::to_string(trainer.steps()) +
                             " does not fall in epoch " + std::to_string(start.first_epoch) +
                             " of " + std::to_string(batches) + " steps");
  start.first_step = static_cast<int>(into);
  if (start.first_step > 0) {  // the optimiser file's save, made in mid-epoch
    const engine::Metadata& m = point.metadata;
    const std::string from = engine::optimizer_state_path(o.resume);
    start.carried.totals.loss_sum = metadata_number(m, from, "epoch_loss_sum");
    start.carried.totals.correct = engine::metadata_count(m, from, "epoch_correct");
    start.carried.totals.seen = engine::metadata_count(m, from, "epoch_seen");
    start.carried.seconds = metadata_number(m, from, "epoch_seconds");
    start.carried.gemm_seconds = metadata_number(m, from, "epoch_gemm_seconds");
  }
  start.history = resumed.history;
  if (!point.note.empty()) std::cout << "note: " << point.note << "\n";
  std::cout << "resumed from " << engine::optimizer_state_path(o.resume) << " (save "
            << point.metadata.at("save_id") << " of run " << o.run_id << "): after epoch "
            << resumed.epoch;
  if (start.first_step > 0)
    std::cout << " and " << start.first_step << " of epoch " << start.first_epoch << "'s "
              << batches << " steps";
  std::cout << "\n";
  return start;
}
