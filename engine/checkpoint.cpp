#include "engine/checkpoint.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
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

// Fills every slot from the file (read and checked whole by safetensors::read), which must hold
// exactly those tensors (but for `ignored` ones); checks them all before touching any.
Metadata load(Context& ctx, const std::string& path, const safetensors::Contents& file,
              const std::vector<Slot>& slots, const std::set<std::string>& ignored = {}) {
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

namespace {

std::mutex held_mutex;
// The lock files held, and by which process: a child made by fork() inherits the set, not the
// locks' ownership (its own open of the file conflicts with its parent's).
std::map<std::pair<dev_t, ino_t>, pid_t> held_locks;

bool held_here(dev_t dev, ino_t ino) {
  const auto it = held_locks.find({dev, ino});
  return it != held_locks.end() && it->second == ::getpid();
}

}  // namespace

CheckpointLock::CheckpointLock(const std::string& path) : path_(path), lock_path_(path + ".lock") {
  if (path.empty()) throw Error("checkpoint: an empty path");
  const std::string what = "checkpoint " + path;
  for (int attempt = 0; attempt < 100; ++attempt) {
    fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw Error(what + ": cannot create its lock file " + lock_path_ + ": " +
                  std::strerror(errno) +
                  " (a run that saves there needs to create files beside it)");
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
      const int e = errno;
      ::close(fd_);
      throw Error(what + ": cannot stat its lock file " + lock_path_ + ": " + std::strerror(e));
    }
    {
      const std::lock_guard<std::mutex> guard(held_mutex);
      if (held_here(st.st_dev, st.st_ino)) {
        ::close(fd_);
        throw Error(what + ": this process holds its lock " + lock_path_ +
                    " already (two writers of one path in one program)");
      }
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int e = errno;
      char text[32] = {0};
      const ssize_t n = ::pread(fd_, text, sizeof text - 1, 0);
      ::close(fd_);
      if (e != EWOULDBLOCK)
        throw Error(what + ": cannot lock " + lock_path_ + ": " + std::strerror(e));
      std::string pid = n > 0 ? std::string(text, static_cast<size_t>(n)) : "";
      pid = pid.substr(0, pid.find_first_not_of("0123456789"));
      throw Error(what + " is being written by another run (" +
                  (pid.empty() ? std::string("pid unknown") : "pid " + pid) + ", which holds " +
                  lock_path_ +
                  "); two runs saving to one path would overwrite each other's saves: wait for "
                  "that run to end, or save to another path");
    }
    // A holder that released it removed the file: locked, but no longer the path's. Try again.
    struct stat now {};
    if (::stat(lock_path_.c_str(), &now) != 0 || now.st_dev != st.st_dev ||
        now.st_ino != st.st_ino) {
      ::close(fd_);
      continue;
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
      // The lock holds without the pid; a second run's message then says "pid unknown".
    }
    const std::lock_guard<std::mutex> guard(held_mutex);
    held_locks[{st.st_dev, st.st_ino}] = ::getpid();
    return;
  }
  throw Error(what + ": cannot take its lock " + lock_path_ +
              ": the file keeps being replaced; try again");
}

CheckpointLock::~CheckpointLock() {
  bool mine = false;  // not in a child made by fork(), whose copy this may be
  struct stat st {};
  if (::fstat(fd_, &st) == 0) {
    const std::lock_guard<std::mutex> guard(held_mutex);
    mine = held_here(st.st_dev, st.st_ino);
    if (mine) held_locks.erase({st.st_dev, st.st_ino});
  }
  if (mine) ::unlink(lock_path_.c_str());  // while locked: a waiter then sees a new file (above)
  ::close(fd_);
}

bool CheckpointLock::held(const std::string& path) {
  struct stat st {};
  if (::stat((path + ".lock").c_str(), &st) != 0) return false;
  const std::lock_guard<std::mutex> guard(held_mutex);
  return held_here(st.st_dev, st.st_ino);
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
