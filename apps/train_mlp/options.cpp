#include "apps/train_mlp/options.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "apps/common/parse_number.h"
#include "data/datasets.h"
#include "engine/atomic_file.h"
#include "kernels/gemm.h"
#include "models/mlp.h"

namespace {

using apps::bad_value;
using apps::parse_choice;
using apps::parse_int;
using apps::parse_real;
using apps::parse_seed;
using apps::parse_sizes;
using apps::Range;

// A file the run will write, checked before any work: a file name (not a folder), in a folder
// that exists and is writable, and not something other than a regular file (which the rename
// that writes it would replace).
void require_writable(const std::string& flag, const std::string& path) {
  if (path.empty()) throw std::runtime_error(flag + " needs a file name, got ''");
  if (path.back() == '/')
    throw std::runtime_error(flag + " " + path + ": names a folder; give a file name");
  engine::require_regular_or_absent(flag, path);
  const size_t slash = path.find_last_of('/');
  const std::string dir =
      slash == std::string::npos ? "." : path.substr(0, std::max<size_t>(slash, 1));
  if (::access(dir.c_str(), W_OK) != 0)
    throw std::runtime_error(flag + " " + path + ": the folder " + dir +
                             " does not exist or is not writable");
}

// The file a path names, as one string: its folder resolved (links, "..", "."), then its name.
std::string file_identity(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string dir =
      slash == std::string::npos ? "." : path.substr(0, std::max<size_t>(slash, 1));
  char* real = ::realpath(dir.c_str(), nullptr);
  if (real == nullptr) return path;
  const std::string out = std::string(real) + "/" + path.substr(slash + 1);
  std::free(real);
  return out;
}

// No two of the files a run writes may be one file: each would overwrite the other.
void require_distinct(const std::vector<std::pair<std::string, std::string>>& targets) {
  for (size_t i = 0; i < targets.size(); ++i)
    for (size_t j = i + 1; j < targets.size(); ++j)
      if (file_identity(targets[i].second) == file_identity(targets[j].second))
        throw std::runtime_error(targets[i].first + " " + targets[i].second + " and " +
                                 targets[j].first + " " + targets[j].second + " are the same file");
}

// --resume and --eval take the model from the checkpoint's tensors (models::mlp_sizes, from the
// header alone: no tensor data is read and no model built) and the run's settings from its
// metadata, each parsed as strictly as its flag; a flag given on the command line must agree.
// --resume needs every setting (a checkpoint that train_mlp wrote); --eval adopts those present,
// so that a PyTorch state_dict without metadata is scored, and --dataset there picks the data.
void adopt_checkpoint(Options& o, const std::string& flag, const std::string& path) {
  const engine::safetensors::Header header = engine::safetensors::read_header(path);
  const models::MlpSizes sizes = models::mlp_sizes(path, header);
  const engine::Metadata& m = header.metadata;
  const bool resume = flag == "--resume";
  const std::string source = flag + " " + path;
  auto get = [&](const char* key) -> std::optional<std::string> {
    const auto it = m.find(key);
    if (it != m.end()) return it->second;
    if (resume)
      throw std::runtime_error(source + ": its metadata has no '" + key +
                               "' (not written by train_mlp?)");
    return std::nullopt;
  };
  auto adopt = [&](const char* option, const char* key, auto& field, auto parse) {
    const std::optional<std::string> text = get(key);
    if (!text) return;
    const auto value = parse(source + ": metadata '" + key + "'", *text);
    if (o.given.count(option) && field != value)
      throw std::runtime_error(source + ": the checkpoint has " + key + " " + *text + ", which " +
                               option + " contradicts");
    field = value;
  };
  if (o.given.count("--hidden") && o.hidden != sizes.hidden)
    throw std::runtime_error(source + ": the checkpoint's tensors are " + sizes.text() +
                             ", which --hidden contradicts");
  o.hidden = sizes.hidden;
  const auto positive_int = [](const std::string& what, const std::string& text) {
    return parse_int(what, text, 1);
  };
  const auto real = [](Range range) {
    return [range](const std::string& what, const std::string& text) {
      return parse_real(what, text, range);
    };
  };
  const auto choice = [](const char* first, const char* second) {
    return [=](const std::string& what, const std::string& text) {
      return parse_choice(what, text, first, second);
    };
  };
  adopt("--batch", "batch", o.batch, positive_int);
  adopt("--seed", "seed", o.seed, parse_seed);
  adopt("--optimizer", "optimizer", o.optimizer, choice("sgd", "adam"));
  adopt("--lr", "lr", o.lr, real(Range::Positive));
  adopt("--momentum", "momentum", o.momentum, real(Range::BelowOne));
  adopt("--weight-decay", "weight_decay", o.weight_decay, real(Range::NonNegative));
  adopt("--schedule", "schedule", o.schedule, choice("cosine", "constant"));
  if (const std::optional<std::string> text = get("epochs")) {  // --epochs may extend the run
    const int saved = parse_int(source + ": metadata 'epochs'", *text, 1);
    if (!o.given.count("--epochs")) o.epochs = saved;
  }
  if (const std::optional<std::string> text = get("epoch"))
    parse_int(source + ": metadata 'epoch'", *text, 1);
  data::require_input_normalisation(path, m);
  // The dataset: the checkpoint's, unless --dataset says otherwise (for --eval; --resume must
  // continue on the same data).
  const data::DatasetInfo* named = data::checkpoint_dataset(path, m);
  if (resume) {
    if (named == nullptr) get("dataset");  // throws: --resume needs it
    if (o.given.count("--dataset") && o.dataset != named->name)
      throw std::runtime_error(source + ": the checkpoint has dataset " + named->name +
                               ", which --dataset contradicts");
  }
  if (!o.given.count("--dataset")) {
    if (named != nullptr)
      o.dataset = named->name;
    else
      std::cout << "note: " << path << " names no dataset; evaluating on " << o.dataset
                << " (--dataset to choose)\n";
  }
  if (resume)
    adopt(
        "--train-limit", "train_limit", o.train_limit,
        [](const std::string& what, const std::string& text) { return parse_int(what, text, 0); });
  if (resume && !o.given.count("--gemm")) o.gemm = *get("variant");  // --gemm may change it
}

}  // namespace

std::optional<int> parse_options(int argc, char** argv, Options& o) {
  // Numbers are taken as text and parsed strictly below (parse_int, parse_real, ...).
  const auto text_of = [](double v) {
    std::ostringstream s;
    s << v;
    return s.str();
  };
  std::string seed_text = std::to_string(o.seed), epochs_text = std::to_string(o.epochs),
              batch_text = std::to_string(o.batch), momentum_text = text_of(o.momentum),
              weight_decay_text = text_of(o.weight_decay), lr_text, train_limit_text,
              log_interval_text, hidden_text;
  for (int h : o.hidden) hidden_text += (hidden_text.empty() ? "" : ",") + std::to_string(h);
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
  app.add_option("--epochs", epochs_text, "Epochs")->capture_default_str()->type_name("UINT");
  app.add_option("--batch", batch_text, "Batch size")->capture_default_str()->type_name("UINT");
  app.add_option("--hidden", hidden_text, "Hidden layer sizes, comma-separated")
      ->capture_default_str()
      ->type_name("SIZES");
  app.add_option("--lr", lr_text,
                 "Peak learning rate, decayed to 0 by a cosine over the run "
                 "(default 0.1 for sgd, 1e-3 for adam)")
      ->type_name("FLOAT");
  app.add_option("--schedule", o.schedule,
                 "cosine (decay to 0 over --epochs) or constant (then a run of N epochs resumed "
                 "for M more equals one of N + M)")
      ->capture_default_str();
  app.add_option("--optimizer", o.optimizer, "sgd or adam")->capture_default_str();
  app.add_option("--momentum", momentum_text, "SGD momentum, in [0, 1)")
      ->capture_default_str()
      ->type_name("FLOAT");
  app.add_option("--weight-decay", weight_decay_text, "L2 weight decay")
      ->capture_default_str()
      ->type_name("FLOAT");
  app.add_option("--seed", seed_text, "Seed for initialisation and shuffling, 0 .. 2^64-1")
      ->capture_default_str()
      ->type_name("UINT");
  app.add_option("--dataset", o.dataset,
                 "mnist or fashion (Fashion-MNIST: scripts/setup/fetch_mnist.sh fashion); "
                 "with --eval, the checkpoint's unless given")
      ->capture_default_str();
  app.add_option("--data-dir", o.data_dir,
                 "The dataset's IDX files (default data/mnist or data/fashion-mnist; "
                 "scripts/setup/fetch_mnist.sh fills them)");
  app.add_option("--device", o.device, "auto, cpu or cuda")->capture_default_str();
  app.add_option("--train-limit", train_limit_text,
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
  app.add_option("--log-interval", log_interval_text,
                 "Print a line every N steps (the only progress shown when the output is not a "
                 "terminal; each line waits for the device once)")
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
    o.seed = parse_seed("--seed", seed_text);
    o.epochs = parse_int("--epochs", epochs_text, 1);
    o.batch = parse_int("--batch", batch_text, 1);
    o.hidden = parse_sizes("--hidden", hidden_text);
    if (given("--lr")) o.lr = parse_real("--lr", lr_text, Range::Positive);
    o.momentum = parse_real("--momentum", momentum_text, Range::BelowOne);
    o.weight_decay = parse_real("--weight-decay", weight_decay_text, Range::NonNegative);
    if (given("--train-limit")) o.train_limit = parse_int("--train-limit", train_limit_text, 0);
    if (given("--log-interval")) o.log_interval = parse_int("--log-interval", log_interval_text, 0);
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
  if (!o.resume.empty()) adopt_checkpoint(o, "--resume", o.resume);
  if (!o.eval.empty()) adopt_checkpoint(o, "--eval", o.eval);
  if (o.data_dir.empty()) o.data_dir = data::find_dataset(o.dataset)->default_dir;
  if (!o.resume.empty() && !o.given.count("--save")) o.save = o.resume;  // it keeps saving
  if (!o.save.empty() || o.given.count("--save")) {
    try {
      const std::string flag = o.given.count("--save") ? "--save" : "--resume";
      require_writable(flag, o.save);
      require_writable(flag, engine::optimizer_state_path(o.save));
    } catch (const std::exception& e) {
      if (o.given.count("--save")) throw;
      throw std::runtime_error(std::string(e.what()) +
                               " (a resumed run keeps saving to its checkpoint; --save names "
                               "another file)");
    }
  }
  if (o.given.count("--results")) require_writable("--results", o.results);
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
    require_writable("--step-graph", o.step_graph);
  }
  if (o.given.count("--history")) require_writable("--history", o.history);
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
          {"run_id", o.run_id}};
}
