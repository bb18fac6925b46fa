// Training checkpoints (checkpoint.h): the pair of a model file and an optimiser file that one
// save writes; resuming from it, the parameters of its newer whole file, and its repair.
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/checkpoint/atomic_file.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/checkpoint/checkpoint_slots.h"
#include "engine/checkpoint/safetensors.h"

namespace engine {

namespace {

using detail::all_slots;
using detail::entries;
using detail::exists;
using detail::load;
using detail::parameter_slots;
using detail::parse_step;
using detail::required;
using detail::save_text;
using detail::Slot;
using detail::state_slots;

// The pair check (see checkpoint.h), given the optimiser file's metadata and the model file's
// (null: the model file is missing).
ResumePoint resume_point(const std::string& path, const Metadata* model, const Metadata& state) {
  const std::string state_path = optimizer_state_path(path);
  const std::string old =
      " (written before checkpoints recorded their run and save, or not by train_mlp), so it "
      "cannot be resumed";
  const std::string& run = required(state, state_path, "run_id", old);
  const std::string& save = required(state, state_path, "save_id", old);
  parse_step(state, state_path);
  ResumePoint point{state, "", false};
  if (model == nullptr) {
    point.note = path +
                 " is missing, as a first save stopped between its two renames leaves it; "
                 "resuming from " +
                 state_path + " (" + save_text(state) + "), which holds the parameters too";
    point.model_stale = true;
    return point;
  }
  const std::string& model_run = required(*model, path, "run_id", old);
  if (model_run != run)
    throw Error("checkpoint " + path + " and " + state_path + " are from different runs (run_id " +
                model_run + " and " + run + "); resuming needs the pair that one run saved");
  const auto model_save = model->find("save_id");
  if (model_save == model->end() || model_save->second != save) {
    point.note = path + " is from another save of this run (" + save_text(*model) + ") than " +
                 state_path + " (" + save_text(state) +
                 "), as a save stopped between its two renames leaves them; resuming from " +
                 state_path + ", which holds the parameters too";
    point.model_stale = true;
  }
  return point;
}

// The optimiser's own tensors in an optimiser file of a pair (the others are the parameters):
// its "state_tensors", or, in a file written before it was recorded, the engine's optimisers'.
std::set<std::string> state_tensor_names(const Metadata& m) {
  const auto it = m.find("state_tensors");
  if (it == m.end()) return {"momentum_buffer", "exp_avg", "exp_avg_sq"};
  std::set<std::string> names;
  size_t start = 0;
  while (start <= it->second.size()) {
    const size_t comma = std::min(it->second.find(',', start), it->second.size());
    if (comma > start) names.insert(it->second.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

// A header with only the parameters' tensors of an optimiser file.
safetensors::Header parameters_of_state(safetensors::Header header) {
  const std::set<std::string> state = state_tensor_names(header.metadata);
  std::vector<safetensors::TensorInfo> kept;
  header.data_bytes = 0;
  for (safetensors::TensorInfo& t : header.tensors)
    if (!state.count(t.name)) {
      header.data_bytes += t.end - t.begin;
      kept.push_back(std::move(t));
    }
  header.tensors = std::move(kept);
  return header;
}

// Whether an optimiser file's metadata is a training pair's (its parameters a resume point's).
bool is_pair_state(const Metadata& m) {
  return m.count("run_id") && m.count("save_id") && m.count("step");
}

int64_t step_or(const Metadata& m, int64_t fallback) {
  const auto it = m.find("step");
  if (it == m.end() || it->second.empty() || it->second.size() > 18 ||
      it->second.find_first_not_of("0123456789") != std::string::npos)
    return fallback;
  return std::stoll(it->second);
}

}  // namespace

void save_training_checkpoint(Context& ctx, const std::string& path,
                              const std::vector<Parameter*>& params, Optimizer& opt,
                              const Metadata& metadata) {
  if (path.empty()) throw Error("checkpoint: an empty path");
  if (metadata.count("run_id") == 0)
    throw Error("checkpoint " + path + ": save_training_checkpoint needs a 'run_id'");
  std::optional<CheckpointLock> lock;  // a run that saves here holds it already
  if (!CheckpointLock::held(path)) lock.emplace(path);
  Metadata m = metadata;
  m["save_id"] = random_identity();
  m["step"] = std::to_string(opt.read_steps(ctx));  // the device's count: graph replays included
  Metadata state_metadata = m;
  std::string names;
  for (const Slot& s : state_slots(opt)) names += (names.empty() ? "" : ",") + s.name;
  state_metadata["state_tensors"] = names;
  const std::string state_path = optimizer_state_path(path);
  // Both whole and on disk before either replaces its predecessor; the optimiser file first.
  StagedFile model("checkpoint", path,
                   safetensors::encode(path, entries(ctx, parameter_slots(params)), m));
  StagedFile state(
      "checkpoint", state_path,
      safetensors::encode(state_path, entries(ctx, all_slots(params, opt)), state_metadata));
  state.commit();
  model.commit();
  sync_folder("checkpoint", path);
}

ResumePoint read_resume_point(const std::string& path) {
  const Metadata state = safetensors::read(optimizer_state_path(path)).metadata;
  if (!exists(path)) return resume_point(path, nullptr, state);
  const Metadata model = read_checkpoint_metadata(path);
  return resume_point(path, &model, state);
}

ResumePoint load_training_checkpoint(Context& ctx, const std::string& path,
                                     const std::vector<Parameter*>& params, Optimizer& opt) {
  const std::string state_path = optimizer_state_path(path);
  const safetensors::Contents state = safetensors::read(state_path);
  Metadata model;
  const bool has_model = exists(path);
  if (has_model) model = read_checkpoint_metadata(path);
  ResumePoint point = resume_point(path, has_model ? &model : nullptr, state.metadata);
  load(ctx, state_path, state, all_slots(params, opt));
  opt.set_steps(ctx, parse_step(state.metadata, state_path));
  return point;
}

ParameterFile find_parameters(const std::string& path) {
  const std::string state_path = optimizer_state_path(path);
  if (!exists(state_path)) return {path, safetensors::read_header(path), ""};
  const safetensors::Header state = safetensors::read_header(state_path);
  if (!is_pair_state(state.metadata)) return {path, safetensors::read_header(path), ""};
  if (!exists(path))
    return {state_path, parameters_of_state(state),
            path +
                " is missing (a first save stopped between its two renames leaves only the "
                "optimiser file); using the parameters in " +
                state_path + " (" + save_text(state.metadata) +
                "), which holds them too (a resumed run rewrites " + path + ")"};
  safetensors::Header model = safetensors::read_header(path);
  const Metadata& mm = model.metadata;
  const auto same = [&](const char* key) {
    const auto a = mm.find(key);
    const auto b = state.metadata.find(key);
    return a != mm.end() && b != state.metadata.end() && a->second == b->second;
  };
  if (same("run_id") && !same("save_id") &&
      step_or(state.metadata, 0) > step_or(model.metadata, -1))
    return {state_path, parameters_of_state(state),
            path + " is from an earlier save (" + save_text(model.metadata) + ") than " +
                state_path + " (" + save_text(state.metadata) +
                "), as a save stopped between its two renames leaves them; using the newer "
                "parameters in " +
                state_path + " (a resumed run rewrites " + path + ")"};
  return {path, std::move(model), ""};
}

Metadata load_parameters(Context& ctx, const ParameterFile& file,
                         const std::vector<Parameter*>& params) {
  const safetensors::Contents contents = safetensors::read(file.path);
  std::set<std::string> ignored;  // the optimiser's tensors, when the file is an optimiser file
  for (const safetensors::Entry& e : contents.tensors)
    if (std::none_of(file.header.tensors.begin(), file.header.tensors.end(),
                     [&](const safetensors::TensorInfo& t) { return t.name == e.name; }))
      ignored.insert(e.name);
  return load(ctx, file.path, contents, parameter_slots(params), ignored);
}

std::string repair_model_file(const std::string& path) {
  const std::string state_path = optimizer_state_path(path);
  std::optional<CheckpointLock> lock;
  if (!CheckpointLock::held(path)) lock.emplace(path);
  const safetensors::Contents state = safetensors::read(state_path);  // verified, whole
  const ResumePoint point =
      exists(path) ? [&] {
        const Metadata model = read_checkpoint_metadata(path);
        return resume_point(path, &model, state.metadata);
      }()
                   : resume_point(path, nullptr, state.metadata);
  if (!point.model_stale) return "";
  const std::string before = exists(path) ? path + " was from an earlier save (" +
                                                save_text(read_checkpoint_metadata(path)) + ")"
                                          : path + " was missing";
  const std::set<std::string> names = state_tensor_names(state.metadata);
  std::vector<safetensors::Entry> parameters;
  for (const safetensors::Entry& e : state.tensors)
    if (!names.count(e.name)) parameters.push_back(e);
  // In the file's order (the model's, as the save wrote them): the bytes the save would have
  // written.
  std::vector<safetensors::TensorInfo> order = safetensors::read_header(state_path).tensors;
  const auto begin_of = [&](const std::string& name) {
    for (const safetensors::TensorInfo& t : order)
      if (t.name == name) return t.begin;
    return uint64_t{0};
  };
  std::stable_sort(parameters.begin(), parameters.end(),
                   [&](const safetensors::Entry& a, const safetensors::Entry& b) {
                     return begin_of(a.name) < begin_of(b.name);
                   });
  Metadata m = state.metadata;
  m.erase("state_tensors");
  replace_file("checkpoint", path, safetensors::encode(path, parameters, m));
  return before + "; rewrote it from the parameters in " + state_path + " (" +
         save_text(state.metadata) + "), so that the pair is one save again";
}

}  // namespace engine
