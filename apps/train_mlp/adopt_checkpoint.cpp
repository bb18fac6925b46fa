// What train_mlp takes from a --resume or --eval checkpoint (adopt_checkpoint.h).
#include "apps/train_mlp/adopt_checkpoint.h"

#include <iostream>
#include <optional>
#include <stdexcept>

#include "apps/common/parse_number.h"
#include "data/datasets.h"
#include "engine/engine.h"
#include "models/mlp.h"

using apps::parse_choice;
using apps::parse_int;
using apps::parse_real;
using apps::parse_seed;
using apps::Range;

void adopt_checkpoint(Options& o, const std::string& flag, const std::string& path) {
  // The newer whole file of a training pair (the optimiser file when the model file is missing or
  // stale); --resume and --eval say which.
  const engine::ParameterFile file = engine::find_parameters(path);
  const engine::safetensors::Header& header = file.header;
  const models::MlpSizes sizes = models::mlp_sizes(file.path, header);
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
