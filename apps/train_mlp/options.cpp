// train_mlp's options (options.h): the command line, the checks that need no data, and what a
// checkpoint records of a run.
#include "apps/train_mlp/options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "apps/common/parse_number.h"
#include "apps/common/strict_flags.h"
#include "apps/train_mlp/adopt_checkpoint.h"
#include "apps/train_mlp/output_files.h"
#include "data/datasets.h"
#include "kernels/gemm.h"

namespace {

using apps::bad_value;
using apps::parse_choice;
using apps::parse_int;
using apps::parse_real;
using apps::parse_seed;
using apps::parse_sizes;
using apps::Range;

// The flags whose values are numbers, taken as text and parsed strictly after CLI11's parse
// (parse_int, parse_real, ...). Those with a default start as its text, shown by --help.
struct NumberTexts {
  std::string seed, epochs, batch, momentum, weight_decay, lr, train_limit, log_interval, hidden;

  explicit NumberTexts(const Options& o) {
    const auto text_of = [](double v) {
      std::ostringstream s;
      s << v;
      return s.str();
    };
    seed = std::to_string(o.seed);
    epochs = std::to_string(o.epochs);
    batch = std::to_string(o.batch);
    log_seconds = std::to_string(o.log_seconds);
    momentum = text_of(o.momentum);
    weight_decay = text_of(o.weight_decay);
    for (int h : o.hidden) hidden += (hidden.empty() ? "" : ",") + std::to_string(h);
  }

  std::string log_seconds;
};

// Declares every flag on `app`, into `o` or (numbers) `texts`. Returns --compare's option, whose
// count says whether it was given.
CLI::Option* add_flags(CLI::App& app, Options& o, NumberTexts& texts) {
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
  app.add_option("--epochs", texts.epochs, "Epochs")->capture_default_str()->type_name("UINT");
  app.add_option("--batch", texts.batch, "Batch size")->capture_default_str()->type_name("UINT");
  app.add_option("--hidden", texts.hidden, "Hidden layer sizes, comma-separated")
      ->capture_default_str()
      ->type_name("SIZES");
  app.add_option("--lr", texts.lr,
                 "Peak learning rate, decayed to 0 by a cosine over the run "
                 "(default 0.1 for sgd, 1e-3 for adam)")
      ->type_name("FLOAT");
  app.add_option("--schedule", o.schedule,
                 "cosine (decay to 0 over --epochs) or constant (then a run of N epochs resumed "
                 "for M more equals one of N + M)")
      ->capture_default_str();
  app.add_option("--optimizer", o.optimizer, "sgd or adam")->capture_default_str();
  app.add_option("--momentum", texts.momentum, "SGD momentum, in [0, 1)")
      ->capture_default_str()
      ->type_name("FLOAT");
  app.add_option("--weight-decay", texts.weight_decay, "L2 weight decay")
      ->capture_default_str()
      ->type_name("FLOAT");
  app.add_option("--seed", texts.seed, "Seed for initialisation and shuffling, 0 .. 2^64-1")
      ->capture_default_str()
      ->type_name("UINT");
  app.add_option("--dataset", o.dataset,
                 "mnist or fashion (fetch Fashion-MNIST with: " +
                     data::fetch_command("fashion", "data/fashion-mnist") +
                     "); with --eval, the checkpoint's unless given")
      ->capture_default_str();
  app.add_option("--data-dir", o.data_dir,
                 "The dataset's IDX files (default data/mnist or data/fashion-mnist; " +
                     data::fetch_command("mnist", "DIR") + " fills DIR with MNIST)");
  app.add_option("--device", o.device, "auto, cpu or cuda")->capture_default_str();
  app.add_option("--train-limit", texts.train_limit,
                 "Use only the first N training examples (0: all)")
      ->type_name("UINT");
  app.add_option("--save", o.save,
                 "After every epoch (and when SIGINT or SIGTERM stops the run), write the "
                 "parameters to this safetensors checkpoint (and the optimiser state beside it, as "
                 "NAME.optim.safetensors)");
  app.add_option("--history", o.history,
                 "Write one row per epoch (epoch, loss, accuracies, lr, epoch and GEMM seconds) to "
                 "this CSV file (JSON: *.json), rewritten after every epoch; a resumed run keeps "
                 "its earlier rows");
  app.add_option("--log-interval", texts.log_interval,
                 "Print a line every N steps (each line waits for the device once)")
      ->type_name("UINT");
  app.add_option("--log-seconds", texts.log_seconds,
                 "Where there is no progress bar (stderr not a terminal) and no --log-interval, "
                 "print a line every S seconds of an epoch (0: none)")
      ->capture_default_str()
      ->type_name("UINT");
  app.add_option("--resume", o.resume,
                 "Continue the run saved in this checkpoint, to --epochs (default: the run's own), "
                 "saving to it again unless --save names another");
  app.add_option("--eval", o.eval,
                 "Print the test loss and accuracy of this checkpoint (train_mlp's, or a PyTorch "
                 "state_dict of nn.Sequential(Linear, ReLU, ..., Linear)), and exit");
  app.add_flag("--no-graph", o.no_graph,
               "Run each training step launch by launch instead of replaying one CUDA graph "
               "(same results, bit for bit; for comparison and debugging)");
  app.add_flag("--serial-step", o.serial_step,
               "Queue each training step's kernels one after another on one stream, instead of "
               "running its independent gradients and updates side by side (same results, bit "
               "for bit; for measuring the difference)");
  app.add_flag("--branched-no-graph", o.branched_no_graph,
               "With --no-graph, still run each step's independent gradients and updates side by "
               "side, in the graph's order (slower on the host; scripts/check/critical_path.py "
               "profiles the graph's kernels this way)");
  app.add_flag("--no-dependent-launch", o.no_dependent_launch,
               "Launch each kernel after the one before it has finished, instead of letting the "
               "production and engine kernels start while it finishes (Hopper's programmatic "
               "dependent launch; same results, bit for bit; for measuring the difference)");
  app.add_option("--step-graph", o.step_graph,
                 "Write the captured training step's CUDA graph to this JSON file: its kernels in "
                 "launch order and which ones each waits for (scripts/check/critical_path.py "
                 "reads it; needs the GPU and the graph)");
  return compare;
}

}  // namespace

std::optional<int> parse_options(int argc, char** argv, Options& o) {
  NumberTexts texts(o);
  CLI::App app{"Train an MLP on MNIST; every matrix product runs on the chosen GEMM variant."};
  const CLI::Option* compare = add_flags(app, o, texts);
  if (const std::optional<std::string> why = apps::switch_given_a_value(app, argc, argv)) {
    std::cerr << "train_mlp: error: " << *why << "\n";
    return 1;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  o.compare = compare->count() > 0;
  // A bare --compare leaves one empty value behind.
  o.compare_extra.erase(std::remove(o.compare_extra.begin(), o.compare_extra.end(), ""),
                        o.compare_extra.end());
  for (const CLI::Option* opt : app.get_options())
    if (opt->count() > 0) o.given.insert(opt->get_name());
  const auto given = [&](const char* flag) { return o.given.count(flag) > 0; };
  try {
    o.seed = parse_seed("--seed", texts.seed);
    o.epochs = parse_int("--epochs", texts.epochs, 1);
    o.batch = parse_int("--batch", texts.batch, 1);
    o.hidden = parse_sizes("--hidden", texts.hidden);
    if (given("--lr")) o.lr = parse_real("--lr", texts.lr, Range::Positive);
    o.momentum = parse_real("--momentum", texts.momentum, Range::BelowOne);
    o.weight_decay = parse_real("--weight-decay", texts.weight_decay, Range::NonNegative);
    if (given("--train-limit")) o.train_limit = parse_int("--train-limit", texts.train_limit, 0);
    o.log_seconds = parse_int("--log-seconds", texts.log_seconds, 0);
    if (given("--log-interval"))
      o.log_interval = parse_int("--log-interval", texts.log_interval, 0);
    parse_choice("--optimizer", o.optimizer, "sgd", "adam");
    parse_choice("--schedule", o.schedule, "cosine", "constant");
    if (data::find_dataset(o.dataset) == nullptr)
      bad_value("--dataset", o.dataset, data::dataset_names());
    // A name given as '' is no silent default.
    for (const char* flag : {"--gemm", "--data-dir", "--resume", "--eval", "--device"})
      if (given(flag) && app.get_option(flag)->as<std::string>().empty())
        throw std::runtime_error(std::string(flag) + " needs a value, got ''");
  } catch (const std::runtime_error& e) {
    std::cerr << "train_mlp: error: " << e.what() << "\n";
    return 1;
  }
  return std::nullopt;
}

void complete_options(Options& o) {
  if (!o.resume.empty() && !o.eval.empty())
    throw std::runtime_error("--resume and --eval cannot be combined");
  if (!o.resume.empty() && o.compare)
    throw std::runtime_error("--resume continues one run; it cannot be combined with --compare");
  if (!o.eval.empty())  // flags of a training run, which --eval would ignore
    for (const char* flag :
         {"--save", "--history", "--results", "--epochs", "--train-limit", "--log-interval",
          "--log-seconds", "--compare", "--no-graph", "--serial-step", "--branched-no-graph",
          "--lr", "--optimizer", "--momentum", "--weight-decay", "--schedule", "--seed"})
      if (o.given.count(flag))
        throw std::runtime_error(std::string("--eval scores a checkpoint and trains nothing: ") +
                                 flag + " does not apply");
  if (!o.resume.empty()) adopt_checkpoint(o, "--resume", o.resume);
  if (!o.eval.empty()) adopt_checkpoint(o, "--eval", o.eval);
  if (o.optimizer == "adam" && o.given.count("--momentum"))
    throw std::runtime_error(
        "--momentum is SGD's: --optimizer adam does not use it (its moment decay rates are "
        "fixed); drop --momentum");
  if (o.data_dir.empty()) o.data_dir = data::find_dataset(o.dataset)->default_dir;
  if (!o.resume.empty() && !o.given.count("--save")) o.save = o.resume;  // it keeps saving
  if (!o.save.empty() || o.given.count("--save")) {
    try {
      const std::string flag = o.given.count("--save") ? "--save" : "--resume";
      apps::require_writable(flag, o.save);
      apps::require_writable(flag, engine::optimizer_state_path(o.save));
    } catch (const std::exception& e) {
      if (o.given.count("--save")) throw;
      throw std::runtime_error(std::string(e.what()) +
                               " (a resumed run keeps saving to its checkpoint; --save names "
                               "another file)");
    }
  }
  if (o.given.count("--results")) apps::require_writable("--results", o.results);
  if (o.branched_no_graph && !o.no_graph)
    throw std::runtime_error("--branched-no-graph changes how --no-graph runs; give both");
  if (o.branched_no_graph && o.serial_step)
    throw std::runtime_error(
        "--branched-no-graph runs the step's branches, which --serial-step "
        "turns off; give one of them");
  if (o.given.count("--step-graph")) {
    if (o.no_graph)
      throw std::runtime_error(
          "--step-graph writes the step's CUDA graph, which --no-graph turns off");
    if (o.compare)
      throw std::runtime_error(
          "--step-graph writes one variant's step; it cannot be combined with --compare");
    if (!o.eval.empty()) throw std::runtime_error("--step-graph needs a training run, not --eval");
    apps::require_writable("--step-graph", o.step_graph);
  }
  if (o.given.count("--history")) apps::require_writable("--history", o.history);
  std::vector<std::pair<std::string, std::string>> targets;  // flag, path
  if (!o.save.empty()) {
    const std::string flag = o.given.count("--save") ? "--save" : "--resume";
    targets.push_back({flag, o.save});
    targets.push_back({flag + "'s optimiser file", engine::optimizer_state_path(o.save)});
  }
  if (!o.history.empty()) targets.push_back({"--history", o.history});
  if (!o.results.empty()) targets.push_back({"--results", o.results});
  if (!o.step_graph.empty()) targets.push_back({"--step-graph", o.step_graph});
  require_distinct(targets);
}

std::string data_fingerprint(const data::Dataset& set) {
  return engine::fingerprint({{set.labels.data(), set.labels.size() * sizeof(int32_t)},
                              {set.images.data(), set.images.size() * sizeof(float)}});
}

float learning_rate(const Options& o) {
  if (o.lr > 0) return o.lr;
  return o.optimizer == "sgd" ? 0.1f : 1e-3f;
}

engine::TrainerOptions trainer_options(const Options& o, int64_t total_steps, bool cuda_graph) {
  if (o.schedule == "constant") total_steps = 0;
  engine::TrainerOptions t;
  t.max_batch = o.batch;
  t.cuda_graph = cuda_graph;
  t.parallel_step = !o.serial_step;
  t.branch_launch_by_launch = o.branched_no_graph;
  if (o.optimizer == "sgd") {
    t.optimizer = engine::TrainerOptions::Optimizer::Sgd;
    t.sgd = {learning_rate(o), o.momentum, o.weight_decay, total_steps};
  } else {
    t.optimizer = engine::TrainerOptions::Optimizer::Adam;
    t.adam.lr = learning_rate(o);
    t.adam.weight_decay = o.weight_decay;
    t.adam.cosine_steps = total_steps;
  }
  return t;
}

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
          {"lr", number(learning_rate(o))},
          {"momentum", number(o.momentum)},
          {"weight_decay", number(o.weight_decay)},
          {"schedule", o.schedule},
          {"normalisation", data::input_normalisation()},
          {"train_limit", std::to_string(o.train_limit)},
          {"run_id", o.run_id},
          {"data_fingerprint", o.data_fingerprint},
          {"test_fingerprint", o.test_fingerprint}};
}
