// Checkpoints in the safetensors format (engine/safetensors.h), which PyTorch
// (safetensors.torch.load_file) and other tools read.
//
// A model's checkpoint holds its parameters under their engine names, which are PyTorch's
// nn.Sequential names ("0.weight", "0.bias", "2.weight", ...); a 1×n bias is stored with shape
// [n], as nn.Linear has it. Its metadata is free-form strings (train_mlp writes layer sizes,
// dataset, variant, epoch, seed and the optimiser's hyper-parameters). The optimiser's state (its
// flat buffers and step count) goes to a second file, optimizer_state_path(path).
//
// Writing refuses a tensor holding NaN or infinity (nothing is written). It goes to `path.tmp`
// in the same folder (a stale one from a killed save is replaced), flushed
// to disk, then renamed over `path`, so a crash never leaves a half-written file under the real
// name. Reading checks the header's length, its JSON, every tensor's dtype, shape and offsets
// (inside the data, no overlap, nothing left over: the header accounts for the file's size)
// before reading any data, then that the data fits in memory, then that every value is finite,
// all before touching any tensor. Errors are gemm_mlp::Error naming the file and, where
// there is one, the tensor.
#pragma once

#include <string>
#include <vector>

#include "engine/context.h"
#include "engine/module.h"
#include "engine/optim.h"
#include "engine/safetensors.h"

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

}  // namespace engine
