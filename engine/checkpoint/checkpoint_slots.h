// Internal to engine/checkpoint/checkpoint*.cpp: the engine's tensors under their checkpoint names
// (Slot) and the helpers that checkpoint.cpp (one file alone) and checkpoint_pair.cpp (the pair)
// share.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "engine/checkpoint/checkpoint.h"
#include "engine/checkpoint/safetensors.h"

namespace engine::detail {

// A tensor of the engine under its checkpoint name: where its values come from or go to, and
// whether it is stored with shape [n] (a 1×n bias, as nn.Linear has it) or [rows, cols].
struct Slot {
  std::string name;
  Tensor* tensor;
  bool one_dimensional;

  std::vector<int64_t> shape() const {
    if (one_dimensional) return {tensor->cols()};
    return {tensor->rows(), tensor->cols()};
  }
};

std::vector<Slot> parameter_slots(const std::vector<Parameter*>& params);
std::vector<Slot> state_slots(Optimizer& opt);
// The parameters and then the optimiser's state: what the optimiser file of a pair holds.
std::vector<Slot> all_slots(const std::vector<Parameter*>& params, Optimizer& opt);
std::vector<safetensors::Entry> entries(Context& ctx, const std::vector<Slot>& slots);

// metadata[key], or an error naming the file and the key.
const std::string& required(const Metadata& m, const std::string& path, const std::string& key,
                            const std::string& why);
int64_t parse_step(const Metadata& m, const std::string& path);
// "step 6, epoch 6" (the epoch where the metadata has one: train_mlp's).
std::string save_text(const Metadata& m);
bool exists(const std::string& path);

// Fills every slot from the file (read and checked whole by safetensors::read), which must hold
// exactly those tensors (but for `ignored` ones); checks them all before touching any.
Metadata load(Context& ctx, const std::string& path, const safetensors::Contents& file,
              const std::vector<Slot>& slots, const std::set<std::string>& ignored = {});

}  // namespace engine::detail
