// The safetensors dtypes (safetensors.h): their sizes, names and conversion to fp32; and the
// tensors' CRC-32 checksums (safetensors_dtypes.h).
#include "engine/checkpoint/safetensors_dtypes.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "engine/checkpoint/safetensors.h"
#include "engine/runtime/tensor.h"  // gemm_mlp::Error

namespace engine::safetensors {

namespace {

// An IEEE half (binary16) as fp32: exact.
float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h >> 15) << 31;
  const uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0) {  // zero or subnormal: mant · 2^-24, exact in fp32
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  uint32_t bits;
  if (exp == 31)
    bits = sign | 0x7f800000u | (mant << 13);  // infinity or NaN (refused by the caller)
  else
    bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace

namespace detail {

size_t dtype_bytes(Dtype d) {
  switch (d) {
    case Dtype::F16:
    case Dtype::BF16:
      return 2;
    case Dtype::F64:
      return 8;
    default:
      return 4;
  }
}

bool parse_dtype(const std::string& text, Dtype& out) {
  for (Dtype d : {Dtype::F32, Dtype::F16, Dtype::BF16, Dtype::F64})
    if (text == dtype_name(d)) return out = d, true;
  return false;
}

std::string hex32(uint32_t v) {
  char text[9];
  std::snprintf(text, sizeof text, "%08x", v);
  return text;
}

uint32_t crc_of(const void* data, uint64_t n, uint32_t crc) {
  const auto* p = static_cast<const Bytef*>(data);
  uLong c = crc;
  while (n > 0) {
    const uInt chunk = static_cast<uInt>(std::min<uint64_t>(n, 1u << 30));
    c = ::crc32(c, p, chunk);
    p += chunk, n -= chunk;
  }
  return static_cast<uint32_t>(c);
}

void to_fp32(Dtype dtype, const unsigned char* data, uint64_t n, float* values,
             const std::string& where) {
  const auto le = [&](uint64_t offset, int width) {  // the file is little-endian
    uint64_t v = 0;
    for (int b = 0; b < width; ++b) v |= static_cast<uint64_t>(data[offset + b]) << (8 * b);
    return v;
  };
  for (uint64_t i = 0; i < n; ++i) {
    float f;
    switch (dtype) {
      case Dtype::F32: {
        const uint32_t bits = static_cast<uint32_t>(le(4 * i, 4));
        std::memcpy(&f, &bits, 4);
        break;
      }
      case Dtype::F16:
        f = half_to_float(static_cast<uint16_t>(le(2 * i, 2)));
        break;
      case Dtype::BF16: {
        const uint32_t bits = static_cast<uint32_t>(le(2 * i, 2)) << 16;
        std::memcpy(&f, &bits, 4);
        break;
      }
      default: {
        const uint64_t bits = le(8 * i, 8);
        double d;
        std::memcpy(&d, &bits, 8);
        if (!std::isfinite(d))
          throw Error(where + " holds a non-finite value at index " + std::to_string(i));
        f = static_cast<float>(d);  // to nearest, ties to even
        if (!std::isfinite(f)) {
          char text[32];
          std::snprintf(text, sizeof text, "%.10g", d);
          throw Error(where + " (F64) holds " + text + " at index " + std::to_string(i) +
                      ", beyond fp32's range (|x| <= 3.4028235e38); scale the model before "
                      "saving it");
        }
      }
    }
    if (!std::isfinite(f))
      throw Error(where + " holds a non-finite value at index " + std::to_string(i));
    values[i] = f;
  }
}

}  // namespace detail

const char* dtype_name(Dtype dtype) {
  switch (dtype) {
    case Dtype::F16:
      return "F16";
    case Dtype::BF16:
      return "BF16";
    case Dtype::F64:
      return "F64";
    default:
      return "F32";
  }
}

}  // namespace engine::safetensors
