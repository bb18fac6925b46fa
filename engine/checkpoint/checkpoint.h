// Checkpoints in the safetensors format (engine/checkpoint/safetensors.h), which PyTorch
// (safetensors.torch.load_file) and other tools read.
//
// A model's checkpoint holds its parameters under their engine names, which are PyTorch's
// nn.Sequential names ("0.weight", "0.bias", "2.weight", ...); a 1×n bias is stored with shape
// [n], as nn.Linear has it. Its metadata is free-form strings (train_mlp writes layer sizes,
// dataset, variant, epoch, seed and the optimiser's hyper-parameters). The optimiser's state (its
// flat buffers and step count) goes to a second file, optimizer_state_path(path).
//
// Writing refuses a tensor holding NaN or infinity (nothing is written). A file goes to a
// temporary file of its own in the same folder, flushed to disk, then renamed over `path`
// (engine/checkpoint/atomic_file.h), so a crash never leaves a half-written file under the real
// name.
//
// A training checkpoint (save_training_checkpoint) is the pair: the model file and the optimiser
// file, which holds the parameters as well, so that it alone is a complete resume point. Both
// files of one save carry its identity in their metadata: the caller's "run_id", and "save_id"
// (new for every save) and "step". Both are written and flushed before either is renamed, the
// optimiser file first; so whatever stops a save (a kill at any instant, a full disk at any
// write), the optimiser file is a whole save, the new or the previous one, and the model file is
// that save's or, after a stop between the two renames, the previous one. Resuming
// (load_training_checkpoint) takes the optimiser file's save and says so when the model file is
// from another save of the run, or missing (a stop between the two renames of the first save);
// files of two different runs are refused. The model file is then stale: repair_model_file
// rewrites it from the optimiser file. Reading parameters to use them (evaluation, prediction)
// takes the newer whole file of the pair the same way (find_parameters), and says so.
//
// Every tensor's data carries a CRC-32 in the metadata (engine/checkpoint/safetensors.h), verified
// on load; a plain PyTorch file without them loads as it is, and so do its F16, BF16 and F64
// tensors.
//
// One writer per path: a run that saves to a path holds a CheckpointLock on it for its whole
// life, so that a second run saving to the same path is refused before it trains; a save made
// without one takes it for the length of the save.
//
// Reading checks the header's length, its JSON, every tensor's dtype, shape and offsets
// (inside the data, no overlap, nothing left over: the header accounts for the file's size)
// before reading any data, then that the data fits in memory, then that every value is finite,
// all before touching any tensor. Errors are gemm_mlp::Error naming the file and, where
// there is one, the tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/checkpoint/safetensors.h"
#include "engine/network/module.h"
#include "engine/network/optim.h"
#include "engine/runtime/context.h"

namespace engine {

using Metadata = safetensors::Metadata;

void save_checkpoint(Context& ctx, const std::string& path, const std::vector<Parameter*>& params,
                     const Metadata& metadata = {});
// Loads every parameter (the model must be built with the same names and shapes; the file must
// hold exactly those tensors) and returns the metadata.
Metadata load_checkpoint(Context& ctx, const std::string& path,
                         const std::vector<Parameter*>& params);
// The metadata alone (e.g. to build the right model before loading), from the header: no tensor
// data is read (safetensors::read_header gives the tensors' names and shapes too).
Metadata read_checkpoint_metadata(const std::string& path);

// "<path without .safetensors>.optim.safetensors".
std::string optimizer_state_path(const std::string& path);
// The optimiser's state buffers and step count, so that a resumed run continues exactly.
void save_optimizer_state(Context& ctx, const std::string& path, Optimizer& opt,
                          const Metadata& metadata = {});
Metadata load_optimizer_state(Context& ctx, const std::string& path, Optimizer& opt);

// A count (digits only, below 10^18) in the metadata of the checkpoint at path. Throws
// gemm_mlp::Error naming the file and the key when it is missing or not a count.
int64_t metadata_count(const Metadata& metadata, const std::string& path, const std::string& key);

// 16 random hexadecimal digits: a run's or a save's identity.
std::string random_identity();

// Writes the pair, path and optimizer_state_path(path), as described above. `metadata` must
// hold "run_id"; both files get it, plus "save_id" and "step" (the optimiser's count); the
// optimiser file also gets "state_tensors", the names of the optimiser's tensors (the others are
// the parameters). Throws gemm_mlp::Error, leaving the previous pair as it was, when either file
// cannot be written whole, or when another process holds the path's CheckpointLock.
void save_training_checkpoint(Context& ctx, const std::string& path,
                              const std::vector<Parameter*>& params, Optimizer& opt,
                              const Metadata& metadata);

// Where a resumed run starts: the optimiser file's save.
struct ResumePoint {
  Metadata metadata;  // the optimiser file's (run settings, run_id, save_id, step, ...)
  // Empty when the model file is from the same save; else what happened and which save is taken.
  std::string note;
  bool model_stale = false;  // the model file is missing or from an earlier save: repair it
};
// Checks the pair at path (see above) and returns its resume point, loading nothing.
ResumePoint read_resume_point(const std::string& path);
// The same, then loads the parameters and the optimiser's state and step count from the
// optimiser file.
ResumePoint load_training_checkpoint(Context& ctx, const std::string& path,
                                     const std::vector<Parameter*>& params, Optimizer& opt);

// The file whose parameters to use, of the pair at `path`: the newer whole one. That is `path`,
// unless its optimiser file is beside it, from the same run (a training pair's) and newer: `path`
// missing (a first save stopped between its renames) or from an earlier save (a later one
// stopped so). A lone file, a PyTorch state_dict, or a pair from two runs: `path` itself.
struct ParameterFile {
  std::string path;            // the file to read them from
  safetensors::Header header;  // its header, the parameters' tensors only
  // Empty when `path` is taken; else which file is used and why (a line for the user).
  std::string note;
};
// From the headers alone (no tensor data is read). Throws gemm_mlp::Error naming the file.
ParameterFile find_parameters(const std::string& path);
// Loads the parameters (the model must be built with the file's names and shapes) from it, its
// data read whole and verified; returns its metadata.
Metadata load_parameters(Context& ctx, const ParameterFile& file,
                         const std::vector<Parameter*>& params);

// Rewrites a stale model file (missing, or from an earlier save of the run: ResumePoint's
// model_stale) from the parameters in its optimiser file, with that save's metadata, so that the
// pair is one save again. Returns what it did (a line for the user), or "" when the model file was
// that save's already. Writes as a save does (atomically, under the path's lock).
std::string repair_model_file(const std::string& path);

// The lock of one path's writers: flock(2) on `path + ".lock"`, created beside it, with the
// holder's pid written in it. Held from construction to destruction; the file is removed on
// release. A lock file that a killed run left behind holds no lock (the system releases it with
// the process), so it never blocks a later run. A second holder is refused: gemm_mlp::Error
// naming the path and the holder's pid. Within one process, a second lock of a path it holds
// already is refused too.
class CheckpointLock {
 public:
  explicit CheckpointLock(const std::string& path);
  ~CheckpointLock();
  CheckpointLock(const CheckpointLock&) = delete;
  CheckpointLock& operator=(const CheckpointLock&) = delete;

  const std::string& lock_path() const { return lock_path_; }
  // Whether this process holds the lock of `path` (a CheckpointLock alive).
  static bool held(const std::string& path);

 private:
  std::string path_, lock_path_;
  int fd_ = -1;
};

// A cheap fingerprint of data (e.g. a dataset's labels and images, to check that a resumed run
// reads the data it started on): 64-bit FNV-1a over the parts' bytes taken 8 at a time, as
// "fnv1a64:" and 16 hexadecimal digits.
std::string fingerprint(const std::vector<std::pair<const void*, size_t>>& parts);

}  // namespace engine
