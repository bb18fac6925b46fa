// train_mlp's reports: what an epoch and a run record, the progress shown during an epoch, and
// the tables written at the end (--results) or after every epoch (--history).
#pragma once

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/engine.h"

// One epoch as train_mlp reports it; lr is the rate after the epoch (the next step's).
struct EpochLog {
  int epoch;
  double loss, train_acc, test_acc, lr, epoch_s, gemm_s;
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

// Training stopped because the loss or a parameter became NaN or infinite: exit status 3.
struct Diverged : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Progress within an epoch. On a terminal (stderr), a bar with the running loss and the epoch's
// ETA, redrawn at most four times a second; with --log-interval N, a line on stdout every N steps.
// Where stderr is not a terminal and there is no --log-interval, a line every --log-seconds (10 s
// by default), so that a log file or a pipe shows progress within a long epoch. Each redraw or
// line reads the running metrics, which waits for the device, so it happens only that often; a
// non-finite running loss stops training there, naming the epoch and step.
class Progress {
 public:
  // first: the steps of the epoch already taken (a run resumed mid-epoch).
  Progress(engine::Trainer& trainer, const char* variant, int epoch, int total, int log_interval,
           int log_seconds, int first = 0)
      : trainer_(trainer),
        variant_(variant),
        epoch_(epoch),
        total_(total),
        log_interval_(log_interval),
        first_(first),
        bar_(isatty(STDERR_FILENO)),
        line_every_(bar_ || log_interval > 0 ? 0 : log_seconds),
        start_(Clock::now()),
        last_draw_(start_),
        last_line_(start_) {}
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress() {
    if (drawn_) std::fprintf(stderr, "\r%78s\r", "");  // clear the line for the epoch's summary
  }

  void update(int done) {
    const Clock::time_point now = Clock::now();
    const bool log =
        (log_interval_ > 0 && done % log_interval_ == 0) ||
        (line_every_ > 0 && done < total_ && now - last_line_ >= std::chrono::seconds(line_every_));
    const bool draw = bar_ && (now - last_draw_ > std::chrono::milliseconds(250) || done == total_);
    if (!log && !draw) return;
    // A non-finite running loss throws engine::NonFiniteLoss here (train.cpp: Diverged).
    const engine::MetricTotals m = trainer_.peek_metrics();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double eta = done > first_ ? elapsed / (done - first_) * (total_ - done) : 0.0;
    if (log) {
      std::printf("[%s] epoch %d step %d/%d  loss %.4f  lr %.4g  %.1f s\n", variant_, epoch_, done,
                  total_, m.mean_loss(), trainer_.lr(), elapsed);
      last_line_ = now;
    }
    if (draw) {
      const int width = 24, filled = width * done / total_;
      std::fprintf(stderr, "\r  epoch %d [%s%s] %d/%d  loss %.4f  ETA %.1f s ", epoch_,
                   std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(), done,
                   total_, m.mean_loss(), eta);
      std::fflush(stderr);
      last_draw_ = now;
      drawn_ = true;
    }
  }

 private:
  using Clock = std::chrono::steady_clock;
  engine::Trainer& trainer_;
  const char* variant_;
  int epoch_, total_, log_interval_, first_;
  bool bar_, drawn_ = false;
  int line_every_;  // seconds between timed lines; 0: none
  Clock::time_point start_, last_draw_, last_line_;
};

// The --compare table on stdout, speedups against naive when it ran.
void print_table(const std::vector<RunResult>& runs);
// --results: one row per variant, CSV or (*.json) JSON.
void write_results(const std::string& path, const std::vector<RunResult>& runs);
// --history: one row per epoch so far, CSV or (*.json) JSON, rewritten after every epoch; each row
// names the run (run_id), so that a resumed run can tell its own history from another's.
void write_history(const std::string& path, const std::vector<EpochLog>& epochs,
                   const std::string& run_id);
// A resumed run's earlier rows: those of the --history file at path, which must be train_mlp's,
// this run's (run_id), epochs 1, 2, ... in order. No file: no rows. Throws std::runtime_error
// naming the file and what does not fit.
std::vector<EpochLog> read_history(const std::string& path, const std::string& run_id);
