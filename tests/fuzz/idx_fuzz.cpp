// libFuzzer target: data::read_idx on arbitrary bytes, as a raw file (scripts/check/fuzz.sh).
// Every input must end in an IdxArray or a data::Error: never a crash, a hang or a sanitizer
// report.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "data/idx.h"
#include "fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  const std::string path = fuzz::write_input("idx", bytes, size);
  try {
    data::read_idx(path);
  } catch (const data::Error&) {
  }
  return 0;
}
