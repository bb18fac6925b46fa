// Reader for the IDX format that MNIST and Fashion-MNIST ship in, raw or gzip-compressed.
//
// Layout (all integers big-endian):
//   bytes 0-1   zero
//   byte  2     element type (only 0x08, unsigned byte, is supported)
//   byte  3     number of dimensions, 1..4
//   then        one uint32 per dimension
//   then        the elements, row-major, exactly prod(dims) bytes and nothing after them
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/cuda_check.h"

namespace data {

// Every failure in data/ (a missing or malformed file, bad arguments) is the project's
// gemm_mlp::Error, whose message names the file, when there is one, and the problem.
using gemm_mlp::Error;

struct IdxArray {
  std::vector<int> dims;        // each > 0
  std::vector<uint8_t> values;  // prod(dims) elements, row-major
};

// Reads an IDX file of unsigned bytes. A file that starts with the gzip magic (1f 8b) is
// decompressed first; any other file is read as it is. The shape the header claims is checked
// against the host memory available (base/memory_limit.h) before anything is allocated, and
// the buffer grows only as data arrives: a file (or a gzip stream) shorter or longer than its
// header says is an error, whatever the header claims.
IdxArray read_idx(const std::string& path);

// The dims of an IDX file's header, checked as read_idx checks them, without reading the data:
// callers check shapes and sizes across files before reading any of them.
std::vector<int> read_idx_shape(const std::string& path);

}  // namespace data
