// Checkpoints: the parameters of a model, by name and shape, in one binary file.
//
// Format (every integer little-endian; floats as IEEE-754 binary32, little-endian):
//   8 bytes   magic "GMLPCKPT"
//   uint32    version (1)
//   uint32    number of parameters
//   per parameter:
//     uint32  name length, then the name's bytes (e.g. "0.weight")
//     int32   rows, int32 cols
//     rows·cols floats, row-major
//   uint64    FNV-1a hash of every byte above (detects corruption and truncation)
//
// save_checkpoint writes `path.tmp` and renames it over `path`, so a crash never leaves a
// half-written checkpoint under the real name. load_checkpoint reads into parameters that already
// exist (build the same model first) and checks everything: magic, version, hash, the number of
// parameters, each name and shape. Both throw engine::Error naming the file and the problem.
#pragma once

#include <string>
#include <vector>

#include "engine/context.h"
#include "engine/module.h"

namespace engine {

void save_checkpoint(Context& ctx, const std::string& path, const std::vector<Parameter*>& params);
void load_checkpoint(Context& ctx, const std::string& path, const std::vector<Parameter*>& params);

}  // namespace engine
