// train_mlp's --resume: what the save it continues from says before any work (read_resumed), and
// where the run picks up once its model and optimiser are built (continue_run).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "apps/train_mlp/options.h"
#include "apps/train_mlp/report.h"
#include "engine/engine.h"
#include "models/mlp.h"

// What --resume found before any work: the save it continues from, and the --history rows of the
// epochs before it.
struct Resumed {
  engine::ResumePoint point;
  int epoch = 0;  // the last completed epoch
  std::vector<EpochLog> history;
};

// --resume: the save it continues from (the pair checked), whether anything is left to train,
// and the --history rows of the epochs before it. Sets o.run_id, and o.epochs unless given.
// Returns nothing when the run is complete (the message is printed; nothing is to be written).
std::optional<Resumed> read_resumed(Options& o);

// A mid-epoch save's totals of its epoch so far, which the rest of that epoch adds to.
struct EpochCarry {
  engine::MetricTotals totals;
  double seconds = 0, gemm_seconds = 0;
};

// Where this process starts: step first_step of epoch first_epoch, with the totals carried from a
// mid-epoch save and the --history rows before it.
struct StartPoint {
  int first_epoch = 1, first_step = 0;
  EpochCarry carried;
  std::vector<EpochLog> history;
};

// Loads the resumed checkpoint's parameters, optimiser state and step count into mlp and trainer
// (the run continues), checks that it is the save read_resumed saw and that it fits the data here
// (examples an epoch, batches an epoch), and prints where the run resumes.
StartPoint continue_run(const Options& o, engine::Context& ctx, models::MLP& mlp,
                        engine::Trainer& trainer, const Resumed& resumed, int examples,
                        int batches);
