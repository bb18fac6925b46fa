// libFuzzer target: the checkpoint reader (engine::safetensors::read) on arbitrary bytes
// (scripts/check/fuzz.sh). Every input must end in its contents or an engine::Error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/checkpoint/safetensors.h"
#include "engine/runtime/tensor.h"
#include "fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  const std::string path = fuzz::write_input("checkpoint", bytes, size);
  try {
    engine::safetensors::read(path);
  } catch (const engine::Error&) {
  }
  return 0;
}
