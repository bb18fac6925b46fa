// Checkpoints (checkpoint.h): a model's file and an optimiser's state file, each on its own; the
// slots and helpers the training pair shares (checkpoint_slots.h); fingerprint.
#include "engine/checkpoint/checkpoint.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <string>

#include "engine/checkpoint/checkpoint_slots.h"
#include "engine/checkpoint/safetensors.h"

namespace engine {

namespace {

bool is_bias(const std::string& name) {
  return name == "bias" || (name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0);
}

}  // namespace

namespace detail {

std::vector<Slot> parameter_slots(const std::vector<Parameter*>& params) {
  std::vector<Slot> out;
  for (Parameter* p : params)
    out.push_back({p->name, &p->value, p->value.rows() == 1 && is_bias(p->name)});
  return out;
}

std::vector<Slot> state_slots(Optimizer& opt) {
  std::vector<Slot> out;
  for (const auto& [name, tensor] : opt.state()) out.push_back({name, tensor, false});
  return out;
}

std::vector<safetensors::Entry> entries(Context& ctx, const std::vector<Slot>& slots) {
  std::vector<safetensors::Entry> out;
  for (const Slot& s : slots) out.push_back({s.name, s.shape(), s.tensor->download(ctx.stream())});
  return out;
}

std::vector<Slot> all_slots(const std::vector<Parameter*>& params, Optimizer& opt) {
  std::vector<Slot> slots = parameter_slots(params);
  for (const Slot& s : state_slots(opt)) slots.push_back(s);
  return slots;
}

const std::string& required(const Metadata& m, const std::string& path, const std::string& key,
                            const std::string& why) {
  const auto it = m.find(key);
  if (it == m.end()) throw Error("checkpoint " + path + ": no '" + key + "' in its metadata" + why);
  return it->second;
}

int64_t parse_step(const Metadata& m, const std::string& path) {
  return metadata_count(m, path, "step");
}

// "step 6, epoch 6" (the epoch where the metadata has one: train_mlp's).
std::string save_text(const Metadata& m) {
  const auto step = m.find("step"), epoch = m.find("epoch");
  return "step " + (step == m.end() ? std::string("?") : step->second) +
         (epoch == m.end() ? std::string() : ", epoch " + epoch->second);
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

Metadata load(Context& ctx, const std::string& path, const safetensors::Contents& file,
              const std::vector<Slot>& slots, const std::set<std::string>& ignored) {
  const auto find = [&](const std::string& name) {
    return std::find_if(file.tensors.begin(), file.tensors.end(),
                        [&](const safetensors::Entry& e) { return e.name == name; });
  };
  for (const safetensors::Entry& e : file.tensors)
    if (!ignored.count(e.name) &&
        std::none_of(slots.begin(), slots.end(), [&](const Slot& s) { return s.name == e.name; }))
      throw Error("checkpoint " + path + ": tensor '" + e.name + "' is not in the model");
  const auto shape_text = [](const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
    return s + "]";
  };
  for (const Slot& s : slots) {
    const auto it = find(s.name);
    if (it == file.tensors.end())
      throw Error("checkpoint " + path + ": tensor '" + s.name + "' is missing");
    const std::vector<int64_t> two_d = {s.tensor->rows(), s.tensor->cols()};
    if (it->shape != s.shape() && it->shape != two_d)
      throw Error("checkpoint " + path + ": tensor '" + s.name + "' has shape " +
                  shape_text(it->shape) + ", the model expects " + shape_text(s.shape()));
  }
  for (const Slot& s : slots) s.tensor->upload(find(s.name)->values, ctx.stream());
  return file.metadata;
}

}  // namespace detail

namespace {

using detail::entries;
using detail::load;
using detail::parameter_slots;
using detail::parse_step;
using detail::required;
using detail::Slot;
using detail::state_slots;

void save(Context& ctx, const std::string& path, const std::vector<Slot>& slots,
          const Metadata& metadata) {
  if (path.empty()) throw Error("checkpoint: an empty path");
  safetensors::write(path, entries(ctx, slots), metadata);
}

}  // namespace

void save_checkpoint(Context& ctx, const std::string& path, const std::vector<Parameter*>& params,
                     const Metadata& metadata) {
  save(ctx, path, parameter_slots(params), metadata);
}

Metadata load_checkpoint(Context& ctx, const std::string& path,
                         const std::vector<Parameter*>& params) {
  return load(ctx, path, safetensors::read(path), parameter_slots(params));
}

Metadata read_checkpoint_metadata(const std::string& path) {
  return safetensors::read_header(path).metadata;
}

std::string optimizer_state_path(const std::string& path) {
  const std::string ext = ".safetensors";
  if (path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0)
    return path.substr(0, path.size() - ext.size()) + ".optim" + ext;
  return path + ".optim" + ext;
}

void save_optimizer_state(Context& ctx, const std::string& path, Optimizer& opt,
                          const Metadata& metadata) {
  Metadata m = metadata;
  m["step"] = std::to_string(opt.read_steps(ctx));  // the device's count: graph replays included
  save(ctx, path, state_slots(opt), m);
}

Metadata load_optimizer_state(Context& ctx, const std::string& path, Optimizer& opt) {
  const safetensors::Contents file = safetensors::read(path);
  const int64_t step = parse_step(file.metadata, path);
  load(ctx, path, file, state_slots(opt));
  opt.set_steps(ctx, step);
  return file.metadata;
}

int64_t metadata_count(const Metadata& m, const std::string& path, const std::string& key) {
  const std::string& text = required(m, path, key, "");
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos)
    throw Error("checkpoint " + path + ": " + key + " '" + text + "' is not a count");
  return std::stoll(text);
}

std::string random_identity() {
  std::random_device device;
  const uint64_t v = (static_cast<uint64_t>(device()) << 32) ^ device();
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

std::string fingerprint(const std::vector<std::pair<const void*, size_t>>& parts) {
  uint64_t h = 14695981039346656037ull;
  const uint64_t prime = 1099511628211ull;
  for (const auto& [data, bytes] : parts) {
    const auto* p = static_cast<const unsigned char*>(data);
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
      uint64_t word;
      std::memcpy(&word, p + i, 8);
      h = (h ^ word) * prime;
    }
    for (; i < bytes; ++i) h = (h ^ p[i]) * prime;
    h = (h ^ bytes) * prime;  // the parts' lengths count too
  }
  char text[32];
  std::snprintf(text, sizeof text, "fnv1a64:%016llx", static_cast<unsigned long long>(h));
  return text;
}

}  // namespace engine
