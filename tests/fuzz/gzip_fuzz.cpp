// libFuzzer target: data::read_idx's gzip path. The input follows the two gzip magic bytes, so
// the reader always takes the decompressing path (scripts/check/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "data/idx.h"
#include "fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  std::vector<uint8_t> gz = {0x1f, 0x8b};
  gz.insert(gz.end(), bytes, bytes + size);
  const std::string path = fuzz::write_input("gzip", gz.data(), gz.size());
  try {
    data::read_idx(path);
  } catch (const data::Error&) {
  }
  return 0;
}
