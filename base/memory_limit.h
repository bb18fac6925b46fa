// Memory limits for sizes read from untrusted files and flags. The size is checked before the
// memory is taken, so a header or a flag that claims too much is an error naming the size, what
// it is for and the limit, not a std::bad_alloc (or the OOM killer) after gigabytes.
//
//   host_memory_limit()            the memory the kernel can hand out now without swapping
//                                  (MemAvailable in /proc/meminfo), else the physical memory;
//                                  in a container, at most what its cgroup has left; under an
//                                  address-space limit (ulimit -v), at most what it leaves
//   check_host_allocation(b, what) throws gemm_mlp::Error when b bytes exceed it
//   check_device_allocation(b, what) the same against the current CUDA device's free memory
//   byte_product({...})            a product of sizes in bytes, saturating instead of wrapping
//
// The environment variable GEMM_MLP_MEMORY_LIMIT (bytes, or with a K, M, G or T suffix: KiB,
// MiB, GiB, TiB) lowers both limits, e.g. on a shared machine, or to test the checks.
//
// Header-only and inline (like cuda_check.h), so data/, engine/ and the apps can all use it.
#pragma once

#include <cuda_runtime_api.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <string>

#include "base/cuda_check.h"

namespace gemm_mlp {

// A limit in bytes and where it comes from, as the error names it.
struct MemoryLimit {
  std::uint64_t bytes = std::numeric_limits<std::uint64_t>::max();
  std::string source;  // e.g. "host memory available (MemAvailable in /proc/meminfo)"
};

// "4.0 GiB (4294967296 bytes)"; small sizes in KiB or MiB.
inline std::string byte_text(std::uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 6) value /= 1024.0, ++unit;
  if (unit == 0) return std::to_string(bytes) + " bytes";
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.1f %s (%llu bytes)", value, units[unit],
                static_cast<unsigned long long>(bytes));
  return buf;
}

// The product of the factors; UINT64_MAX when it would overflow (more than any machine holds).
inline std::uint64_t byte_product(std::initializer_list<std::uint64_t> factors) {
  std::uint64_t product = 1;
  for (std::uint64_t f : factors) {
    if (f != 0 && product > std::numeric_limits<std::uint64_t>::max() / f)
      return std::numeric_limits<std::uint64_t>::max();
    product *= f;
  }
  return product;
}

// The sum; UINT64_MAX when it would overflow.
inline std::uint64_t byte_sum(std::initializer_list<std::uint64_t> terms) {
  std::uint64_t sum = 0;
  for (std::uint64_t t : terms) {
    if (t > std::numeric_limits<std::uint64_t>::max() - sum)
      return std::numeric_limits<std::uint64_t>::max();
    sum += t;
  }
  return sum;
}

constexpr const char* kMemoryLimitVariable = "GEMM_MLP_MEMORY_LIMIT";

// "1073741824", "512M", "1G", "2GiB": the bytes. Throws Error naming the variable otherwise.
inline std::uint64_t parse_memory_limit(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const std::string suffix = text.substr(digits), units = "KMGT";
  const size_t unit = suffix.empty() ? std::string::npos : units.find(suffix[0]);
  const bool suffix_ok =
      suffix.empty() ||
      (unit != std::string::npos && (suffix.size() == 1 || suffix == suffix.substr(0, 1) + "iB"));
  const int shift = suffix.empty() ? 0 : 10 * int(unit + 1);
  // 19 digits always fit 64 bits; the shift must not overflow either.
  if (digits == 0 || digits > 19 || !suffix_ok ||
      std::stoull(text.substr(0, digits)) > (std::numeric_limits<std::uint64_t>::max() >> shift))
    throw Error(std::string(kMemoryLimitVariable) +
                " must be a byte count such as 1073741824, 512M or 1G, got '" + text + "'");
  return std::stoull(text.substr(0, digits)) << shift;
}

// `limit`, lowered to GEMM_MLP_MEMORY_LIMIT when that is set and smaller.
inline MemoryLimit lowered_by_environment(MemoryLimit limit) {
  const char* env = std::getenv(kMemoryLimitVariable);
  if (env == nullptr) return limit;
  const std::uint64_t bytes = parse_memory_limit(env);
  if (bytes < limit.bytes)
    limit = {bytes, std::string("memory allowed by ") + kMemoryLimitVariable};
  return limit;
}

// A cgroup's memory left: its limit less its use, read from `limit_file` and `usage_file`
// (cgroup v2: memory.max and memory.current; v1: memory.limit_in_bytes and
// memory.usage_in_bytes). Unlimited ("max", or no such files) is UINT64_MAX.
inline std::uint64_t cgroup_memory_left(const std::string& limit_file,
                                        const std::string& usage_file) {
  std::ifstream limit_in(limit_file), usage_in(usage_file);
  std::uint64_t limit = 0, usage = 0;
  if (!(limit_in >> limit) || !(usage_in >> usage))
    return std::numeric_limits<std::uint64_t>::max();
  return limit > usage ? limit - usage : 0;
}

// Available rather than physical memory: what a second dataset or a busy machine leaves is what
// can be taken without swapping. Physical memory where /proc/meminfo is missing (not Linux).
inline MemoryLimit host_memory_of_system() {
  std::ifstream meminfo("/proc/meminfo");
  for (std::string key; meminfo >> key;) {
    std::uint64_t kib = 0;
    if (key == "MemAvailable:" && meminfo >> kib)
      return {kib * 1024, "host memory available (MemAvailable in /proc/meminfo)"};
    meminfo.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0)
    return {std::uint64_t(pages) * std::uint64_t(page), "this machine's physical memory"};
  return {};
}

// The address space this process may still map: its limit (RLIMIT_AS, `ulimit -v`) less what it
// maps now (VmSize in /proc/self/status). Unlimited is UINT64_MAX. `limit` and `mapped` stand in
// for the process's own, for tests.
inline MemoryLimit address_space_left(std::uint64_t limit, std::uint64_t mapped) {
  if (limit == std::numeric_limits<std::uint64_t>::max()) return {};
  return {limit > mapped ? limit - mapped : 0,
          "address space left under this process's limit (ulimit -v, RLIMIT_AS: " +
              byte_text(limit) + ", of which " + byte_text(mapped) + " mapped already)"};
}

inline MemoryLimit address_space_left() {
  struct rlimit r {};
  if (::getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return {};
  std::ifstream status("/proc/self/status");
  std::uint64_t mapped_kib = 0;
  for (std::string key; status >> key;) {
    if (key == "VmSize:" && status >> mapped_kib) break;
    status.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return address_space_left(static_cast<std::uint64_t>(r.rlim_cur), mapped_kib * 1024);
}

// host_memory_of_system(), or inside a container whose cgroup limits memory, the less of that and
// the cgroup's memory left, or under an address-space limit, the less of that and what it leaves.
inline MemoryLimit host_memory_limit_of_machine() {
  MemoryLimit machine = host_memory_of_system();
  const char* cgroups[][2] = {{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},  // v2
                              {"/sys/fs/cgroup/memory/memory.limit_in_bytes",
                               "/sys/fs/cgroup/memory/memory.usage_in_bytes"}};
  for (const auto& files : cgroups) {
    const std::uint64_t left = cgroup_memory_left(files[0], files[1]);
    if (left < machine.bytes)
      machine = {left, std::string("memory left in this container (") + files[0] + " less usage)"};
  }
  const MemoryLimit address_space = address_space_left();
  if (address_space.bytes < machine.bytes) machine = address_space;
  return machine;
}

inline MemoryLimit host_memory_limit() {
  return lowered_by_environment(host_memory_limit_of_machine());
}

// The free memory of the current CUDA device (cudaMemGetInfo).
inline MemoryLimit device_memory_limit() {
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return lowered_by_environment({free_bytes, "free memory on the GPU (cudaMemGetInfo: " +
                                                 byte_text(total_bytes) + " in all)"});
}

// Throws Error "<what> needs <bytes>, more than the <limit> of <source>". `what` names the
// file or flag and the size it claims, e.g. "x.idx: shape 65536x256x256 (bytes and floats)".
inline void check_allocation(std::uint64_t bytes, const MemoryLimit& limit,
                             const std::string& what) {
  if (bytes <= limit.bytes) return;
  const std::string needed = bytes == std::numeric_limits<std::uint64_t>::max()
                                 ? "more than 2^64 bytes"
                                 : byte_text(bytes);
  throw Error(what + " needs " + needed + ", more than the " + byte_text(limit.bytes) + " of " +
              limit.source);
}

inline void check_host_allocation(std::uint64_t bytes, const std::string& what) {
  check_allocation(bytes, host_memory_limit(), what);
}

inline void check_device_allocation(std::uint64_t bytes, const std::string& what) {
  check_allocation(bytes, device_memory_limit(), what);
}

}  // namespace gemm_mlp
