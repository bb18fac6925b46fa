// The safetensors file format, on its own (no tensors of the engine, no GPU): what checkpoint.cpp
// writes and reads, and what fuzz/ feeds with arbitrary bytes.
//   8 bytes   N, the JSON header's length (unsigned, little-endian)
//   N bytes   {"__metadata__": {string: string}, "<name>": {"dtype": "F32", "shape": [...],
//              "data_offsets": [b, e]}, ...}, padded with spaces to a multiple of 8
//   the data  each tensor's values, row-major little-endian float32, at [b, e) of this part
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace engine::safetensors {

using Metadata = std::map<std::string, std::string>;

struct Entry {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;  // as many as the shape's product
};

struct Contents {
  Metadata metadata;
  std::vector<Entry> tensors;  // sorted by name
};

// The file's bytes. Refuses a non-finite value or two tensors of a name (`path` names the file in
// the error).
std::string encode(const std::string& path, const std::vector<Entry>& tensors,
                   const Metadata& metadata);
// Writes the file whole (engine/atomic_file.h: a temporary file of its own, flushed, renamed over
// `path`). Refuses, writing nothing, what encode() refuses and a `path` that is not a regular file.
void write(const std::string& path, const std::vector<Entry>& tensors, const Metadata& metadata);

// Reads and checks the whole file: a regular file; a header length that fits; JSON whose
// metadata values are strings; for every tensor dtype F32, a shape of sizes, offsets inside the
// data that match the shape; no overlap and no bytes that no tensor owns; finite values. Throws
// gemm_mlp::Error naming the file and, where there is one, the tensor.
Contents read(const std::string& path);

}  // namespace engine::safetensors
