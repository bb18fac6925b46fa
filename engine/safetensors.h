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

// A tensor as the header describes it: its data is bytes [begin, end) of the data part.
struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

struct Header {
  Metadata metadata;
  std::vector<TensorInfo> tensors;  // sorted by name
  uint64_t data_bytes = 0;          // the data part's size: the sum of the tensors' sizes
};

// The file's bytes. Refuses a non-finite value or two tensors of a name (`path` names the file in
// the error).
std::string encode(const std::string& path, const std::vector<Entry>& tensors,
                   const Metadata& metadata);
// Writes the file whole (engine/atomic_file.h: a temporary file of its own, flushed, renamed over
// `path`). Refuses, writing nothing, what encode() refuses and a `path` that is not a regular file.
void write(const std::string& path, const std::vector<Entry>& tensors, const Metadata& metadata);

// Reads and checks the 8-byte length and the header alone, never the tensors' data: a regular
// file; a header length that fits the file and at most 100 MB; JSON whose metadata values are
// strings; for every tensor dtype F32, a shape of sizes, offsets that match the shape; the tensors
// cover the data part exactly (no overlap, no bytes that no tensor owns, none after the last:
// the file's size is the header's). Throws gemm_mlp::Error naming the file and, where there is
// one, the tensor.
Header read_header(const std::string& path);

// Throws unless twice the header's tensors (held once as read and once by the model) fit in the
// host memory available (base/memory_limit.h), naming the size, the file and the limit.
void require_fits_in_memory(const std::string& path, const Header& header);

// read_header's checks, then require_fits_in_memory, and only then the data, tensor by tensor;
// every value finite.
Contents read(const std::string& path);

}  // namespace engine::safetensors
