// The safetensors file format, on its own (no tensors of the engine, no GPU): what checkpoint.cpp
// writes and reads, and what fuzz/ feeds with arbitrary bytes.
//   8 bytes   N, the JSON header's length (unsigned, little-endian)
//   N bytes   {"__metadata__": {string: string}, "<name>": {"dtype": "F32", "shape": [...],
//              "data_offsets": [b, e]}, ...}, padded with spaces to a multiple of 8
//   the data  each tensor's values, row-major little-endian, at [b, e) of this part
//
// Checksums: every file written here carries, for each tensor, the CRC-32 (zlib's crc32) of its
// data bytes as 8 lowercase hexadecimal digits in the metadata, under "crc32:<tensor name>".
// Reading verifies each one it finds, and a mismatch is an error naming the tensor and the file
// (a flipped bit, a torn copy). A file without them (PyTorch's save_file) loads as it is. The
// "crc32:" keys are the format's own: read_header and read return them in TensorInfo, not in the
// metadata, and encode refuses them from the caller.
//
// Dtypes: written as F32. Read: F32; F16 and BF16 (exact in fp32: every value converts without
// rounding, subnormals included); F64, rounded to the nearest fp32 (ties to even), a value
// beyond fp32's range (|x| > 3.4028235e38) being an error naming the tensor and the index, and
// one below its smallest subnormal becoming ±0. NaN or infinity in any dtype is an error.
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

// The dtypes read (see above): bytes per value 4, 2, 2 and 8.
enum class Dtype { F32, F16, BF16, F64 };
const char* dtype_name(Dtype dtype);

// A tensor as the header describes it: its data is bytes [begin, end) of the data part.
struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
  Dtype dtype = Dtype::F32;
  bool has_crc32 = false;  // the metadata holds "crc32:<name>"
  uint32_t crc32 = 0;      // its value
  uint64_t count() const;  // values: the shape's product
};

struct Header {
  Metadata metadata;
  std::vector<TensorInfo> tensors;  // sorted by name
  uint64_t data_bytes = 0;          // the data part's size: the sum of the tensors' sizes
};

// The file's bytes, a CRC-32 per tensor in the metadata. Refuses a non-finite value, two tensors of
// a name, or a metadata key starting with "crc32:" (`path` names the file in the error).
std::string encode(const std::string& path, const std::vector<Entry>& tensors,
                   const Metadata& metadata);
// Writes the file whole (engine/checkpoint/atomic_file.h: a temporary file of its own, flushed,
// renamed over `path`). Refuses, writing nothing, what encode() refuses and a `path` that is not a
// regular file.
void write(const std::string& path, const std::vector<Entry>& tensors, const Metadata& metadata);

// Reads and checks the 8-byte length and the header alone, never the tensors' data: a regular
// file; a header length that fits the file and at most 100 MB; JSON whose metadata values are
// strings; for every tensor a dtype read here, a shape of sizes, offsets that match the shape and
// dtype, a well-formed checksum where there is one (each "crc32:" key naming a tensor); the tensors
// cover the data part exactly (no overlap, no bytes that no tensor owns, none after the last:
// the file's size is the header's). Throws gemm_mlp::Error naming the file and, where there is
// one, the tensor.
Header read_header(const std::string& path);

// Throws unless twice the header's tensors as fp32 (held once as read and once by the model) fit in
// the host memory available (base/memory_limit.h), naming the size, the file and the limit.
void require_fits_in_memory(const std::string& path, const Header& header);

// read_header's checks, then require_fits_in_memory, and only then the data, tensor by tensor:
// its checksum verified (where the file has one), its values converted to fp32, every one finite.
Contents read(const std::string& path);

}  // namespace engine::safetensors
