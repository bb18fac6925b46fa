#include "engine/checkpoint.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>

#include "engine/atomic_file.h"
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

std::vector<safetensors::Entry> entries(Context& ctx, const std::vector<Slot>& slots) {
  std::vector<safetensors::Entry> out;
  for (const Slot& s : slots) out.push_back({s.name, s.shape(), s.tensor->download(ctx.stream())});
  return out;
}

void save(Context& ctx, const std::string& path, const std::vector<Slot>& slots,
          const Metadata& metadata) {
  if (path.empty()) throw Error("checkpoint: an empty path");
  safetensors::write(path, entries(ctx, slots), metadata);
}

// The parameters and then the optimiser's state: what the optimiser file of a pair holds.
std::vector<Slot> all_slots(const std::vector<Parameter*>& params, Optimizer& opt) {
  std::vector<Slot> slots = parameter_slots(params);
  for (const Slot& s : state_slots(opt)) slots.push_back(s);
  return slots;
}

// metadata[key], or an error naming the file and the key.
const std::string& required(const Metadata& m, const std::string& path, const std::string& key,
                            const std::string& why) {
  const auto it = m.find(key);
  if (it == m.end()) throw Error("checkpoint " + path + ": no '" + key + "' in its metadata" + why);
  return it->second;
}

int64_t parse_step(const Metadata& m, const std::string& path) {
  return metadata_count(m, path, "step");
}

// The pair check (see checkpoint.h), given both files' metadata.
ResumePoint resume_point(const std::string& path, const Metadata& model, const Metadata& state) {
  const std::string state_path = optimizer_state_path(path);
  const std::string old =
      " (written before checkpoints recorded their run and save, or not by train_mlp), so it "
      "cannot be resumed";
  const std::string& run = required(state, state_path, "run_id", old);
  const std::string& save = required(state, state_path, "save_id", old);
  parse_step(state, state_path);
  const std::string& model_run = required(model, path, "run_id", old);
  if (model_run != run)
    throw Error("checkpoint " + path + " and " + state_path + " are from different runs (run_id " +
                model_run + " and " + run + "); resuming needs the pair that one run saved");
  ResumePoint point{state, ""};
  const auto model_save = model.find("save_id");
  if (model_save == model.end() || model_save->second != save) {
    const auto model_step = model.find("step");
    point.note = path + " is from another save of this run (step " +
                 (model_step == model.end() ? std::string("?") : model_step->second) + ") than " +
                 state_path + " (step " + state.at("step") +
                 "), as a save stopped between its two renames leaves them; resuming from " +
                 state_path + ", which holds the parameters too";
  }
  return point;
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

void save_training_checkpoint(Context& ctx, const std::string& path,
                              const std::vector<Parameter*>& params, Optimizer& opt,
                              const Metadata& metadata) {
  if (path.empty()) throw Error("checkpoint: an empty path");
  if (metadata.count("run_id") == 0)
    throw Error("checkpoint " + path + ": save_training_checkpoint needs a 'run_id'");
  Metadata m = metadata;
  m["save_id"] = random_identity();
  m["step"] = std::to_string(opt.read_steps(ctx));  // the device's count: graph replays included
  const std::string state_path = optimizer_state_path(path);
  // Both whole and on disk before either replaces its predecessor; the optimiser file first.
  StagedFile model("checkpoint", path,
                   safetensors::encode(path, entries(ctx, parameter_slots(params)), m));
  StagedFile state("checkpoint", state_path,
                   safetensors::encode(state_path, entries(ctx, all_slots(params, opt)), m));
  state.commit();
  model.commit();
  sync_folder("checkpoint", path);
}

ResumePoint read_resume_point(const std::string& path) {
  return resume_point(path, read_checkpoint_metadata(path),
                      safetensors::read(optimizer_state_path(path)).metadata);
}

ResumePoint load_training_checkpoint(Context& ctx, const std::string& path,
                                     const std::vector<Parameter*>& params, Optimizer& opt) {
  const std::string state_path = optimizer_state_path(path);
  const safetensors::Contents state = safetensors::read(state_path);
  ResumePoint point = resume_point(path, read_checkpoint_metadata(path), state.metadata);
  load(ctx, state_path, state, all_slots(params, opt));
  opt.set_steps(ctx, parse_step(state.metadata, state_path));
  return point;
}

}  // namespace engine
