// How much memory this machine has, for the checks that refuse a size from a file or a flag
// before allocating it (an error naming the size and the limit, never a bare std::bad_alloc).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <string>

namespace engine {

// The host's physical memory in bytes; 0 where the system does not say.
inline uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
}

// "12 MiB", rounded up.
inline std::string mib_text(double bytes) {
  return std::to_string(static_cast<uint64_t>((bytes + (1 << 20) - 1) / (1 << 20))) + " MiB";
}

}  // namespace engine
