// train_mlp's options: the command line, the checks that need no data, and what a checkpoint
// records of a run (written with --save, adopted again by --resume and --eval).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "data/mnist.h"
#include "engine/engine.h"

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
  bool serial_step = false;
  bool no_dependent_launch = false;
  bool branched_no_graph = false;
  std::string step_graph;  // --step-graph: the captured step's topology, as JSON
  std::string schedule = "cosine";
  std::string history;
  int log_interval = 0;
  int log_seconds = 10;  // without a progress bar or --log-interval, a line this often (0: none)
  std::set<std::string> given;  // the flags given on the command line, e.g. "--hidden"
  std::string run_id;  // the run's identity, in its checkpoints and history (kept by --resume)
  // The training set's engine::fingerprint, in its checkpoints (checked by --resume).
  std::string data_fingerprint;
  // The test set's (data_fingerprint()), in its checkpoints: --eval on other data says so.
  std::string test_fingerprint;
};

// A dataset's engine::fingerprint: its labels, then its images.
std::string data_fingerprint(const data::Dataset& set);

// Fills `options` from the command line. Returns the exit status when the program is to stop
// here (--help, a parse error, a bad value; the message is printed), else nothing. Numbers are
// decimal only, the whole value, in range (--momentum in [0, 1), ...); an empty value is an error.
std::optional<int> parse_options(int argc, char** argv, Options& options);

// Adopts the settings of a --resume or --eval checkpoint (the layer sizes from its tensors' shapes,
// read from the header alone; the rest from its metadata, parsed as strictly as the flags;
// --resume also keeps saving to its checkpoint, unless --save names another), fills in the
// defaults that depend on other flags, and checks the flags that need neither a device nor data,
// the files the run will write included. Throws std::runtime_error naming the flag, or the
// checkpoint and its key.
void complete_options(Options& options);

// The peak learning rate: --lr, or the optimiser's default.
float learning_rate(const Options& options);

engine::TrainerOptions trainer_options(const Options& options, int64_t total_steps,
                                       bool cuda_graph);

// What a checkpoint's metadata records of the run that wrote it; epoch is the last completed one.
engine::Metadata run_metadata(const Options& options, const std::string& layers,
                              const char* variant, int epoch);
