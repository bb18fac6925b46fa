#include "engine/checkpoint.h"

#include <algorithm>
#include <string>

#include "engine/safetensors.h"

namespace engine {

namespace {

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

bool is_bias(const std::string& name) {
  return name == "bias" || (name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0);
}

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

void save(Context& ctx, const std::string& path, const std::vector<Slot>& slots,
          const Metadata& metadata) {
  if (path.empty()) throw Error("checkpoint: an empty path");
  std::vector<safetensors::Entry> entries;
  for (const Slot& s : slots)
    entries.push_back({s.name, s.shape(), s.tensor->download(ctx.stream())});
  safetensors::write(path, entries, metadata);
}

// Fills every slot from the file (read and checked whole by safetensors::read), which must hold
// exactly those tensors; checks them all before touching any.
Metadata load(Context& ctx, const std::string& path, const safetensors::Contents& file,
              const std::vector<Slot>& slots) {
  const auto find = [&](const std::string& name) {
    return std::find_if(file.tensors.begin(), file.tensors.end(),
                        [&](const safetensors::Entry& e) { return e.name == name; });
  };
  for (const safetensors::Entry& e : file.tensors)
    if (std::none_of(slots.begin(), slots.end(), [&](const Slot& s) { return s.name == e.name; }))
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
  const Metadata& m = file.metadata;
  const auto it = m.find("step");
  if (it == m.end()) throw Error("checkpoint " + path + ": no 'step' in its metadata");
  const std::string& text = it->second;
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos)
    throw Error("checkpoint " + path + ": step '" + text + "' is not a count");
  load(ctx, path, file, state_slots(opt));
  opt.set_steps(ctx, std::stoll(text));
  return m;
}

}  // namespace engine
