// The readers under fuzzing take a path: each input is written to one file per target and process
// in /dev/shm (memory), overwritten by the next input.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fuzz {

inline std::string write_input(const char* target, const uint8_t* bytes, size_t size) {
  static const std::string path =
      std::string("/dev/shm/gemm_mlp_fuzz_") + target + "_" + std::to_string(::getpid());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(bytes, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

}  // namespace fuzz
