#include "apps/train_mlp/options.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "kernels/gemm.h"

namespace {

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

}  // namespace

std::optional<int> parse_options(int argc, char** argv, Options& o) {
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
  return std::nullopt;
}

void complete_options(Options& o) {
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
          {"schedule", o.schedule}};
}
