// Internal to engine/checkpoint/safetensors*.cpp: the dtypes' sizes and names, their conversion to
// fp32, and the tensors' CRC-32 checksums, apart from the reader and writer (safetensors.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/checkpoint/safetensors.h"

namespace engine::safetensors::detail {

size_t dtype_bytes(Dtype d);
bool parse_dtype(const std::string& text, Dtype& out);

// A CRC-32 as 8 lowercase hexadecimal digits.
std::string hex32(uint32_t v);
// zlib's crc32 over any length (its length argument is 32-bit).
uint32_t crc_of(const void* data, uint64_t n, uint32_t crc = 0);

// The n values of `dtype` at `data` (little-endian, as the file holds them) as fp32 in `values`,
// which may be `data` itself (F32, converted in place); a non-finite value, or an F64 one beyond
// fp32's range, is an error naming `where` and the index.
void to_fp32(Dtype dtype, const unsigned char* data, uint64_t n, float* values,
             const std::string& where);

}  // namespace engine::safetensors::detail
