// OpenBLAS under an address-space limit (ulimit -v). As the library loads, before main, each of
// its worker threads maps a buffer of its own (128 MiB on x86-64). Where the limit leaves no room
// for one, OpenBLAS before 0.3.30 (Debian 12 ships 0.3.21, Ubuntu 24.04 0.3.26) retries the map
// for ever (OpenBLAS issue 5289): the first threaded GEMM waits on that worker, and so does the
// exit that joins it, even in a run that never multiplies on the CPU. The workers also race the
// other libraries' initialisers for the room, and cuBLAS's crash when they lose it.
//
// So an app runs OpenBLAS on one thread (no workers) under a finite limit, unless
// OPENBLAS_NUM_THREADS is set, which is the user's to choose. OpenBLAS reads it as it loads, and
// only the executable's .preinit_array runs before that; a variable set there is lost (the C
// library's own initialiser resets the environment after it), so the program is executed again
// there, with OPENBLAS_NUM_THREADS=1 added. The file that holds main says, at namespace scope,
//
//   GEMM_MLP_ONE_OPENBLAS_THREAD_UNDER_ADDRESS_LIMIT;
//
// and openblas_threads_capped() tells whether this process is such a re-execution, for a note.
// The main thread's own buffer: gemm::reserve_host_scratch (kernels/gemm.h). Linux (ELF, and
// /proc/self/exe) only, as the rest of the project. Header-only, like memory_limit.h.
#pragma once

#include <alloca.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace gemm_mlp {
namespace detail {

constexpr const char* kOpenblasOneThread = "OPENBLAS_NUM_THREADS=1";
constexpr const char* kOpenblasCapped = "GEMM_MLP_OPENBLAS_CAPPED=1";

// What the libraries' initialisers need past what the loader maps: cuBLAS's crash where fewer
// MiB are left (CUDA 13: about 6 MiB of them, seen under ulimit -v); 64 leaves room to spare.
constexpr unsigned long kInitialiserMiB = 64;

// VmSize from /proc/self/status, in KiB (0 when unread): system calls only.
inline unsigned long mapped_kib() {
  char text[4096];
  const int fd = open("/proc/self/status", O_RDONLY);
  if (fd < 0) return 0;
  const ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return 0;
  text[n] = '\0';
  const char* at = std::strstr(text, "VmSize:");
  if (at == nullptr) return 0;
  return std::strtoul(at + 7, nullptr, 10);
}

// The decimal digits of v, for a message written before the C library is initialised.
inline const char* decimal(unsigned long v, char (&digits)[24]) {
  char* end = digits + sizeof digits - 1;
  *end = '\0';
  do *--end = char('0' + v % 10);
  while ((v /= 10) != 0);
  return end;
}

inline void write_text(const char* text) {
  [[maybe_unused]] const ssize_t n = write(STDERR_FILENO, text, std::strlen(text));
}

// Called from .preinit_array, before any shared library's initialiser (the C library's too): so
// only system calls and string functions, and the environment read from `env`.
inline void one_openblas_thread_under_address_limit(int, char** argv, char** env) {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
  const unsigned long limit_mib = limit.rlim_cur >> 20, mapped_mib = mapped_kib() >> 10;
  if (limit_mib < mapped_mib + kInitialiserMiB) {
    char a[24], b[24];
    const char* slash = std::strrchr(argv[0], '/');
    write_text(slash != nullptr ? slash + 1 : argv[0]);
    write_text(": error: the address-space limit (ulimit -v) of ");
    write_text(decimal(limit_mib, a));
    write_text(" MiB leaves too little once the program's libraries are mapped (");
    write_text(decimal(mapped_mib, b));
    write_text(" MiB) for their initialisers to run; raise the limit\n");
    _exit(1);
  }
  int count = 0;
  for (; env[count] != nullptr; ++count)
    if (std::strncmp(env[count], "OPENBLAS_NUM_THREADS=", 21) == 0) return;
  char** with_one = static_cast<char**>(alloca((count + 3) * sizeof(char*)));
  std::memcpy(with_one, env, count * sizeof(char*));
  with_one[count] = const_cast<char*>(kOpenblasOneThread);
  with_one[count + 1] = const_cast<char*>(kOpenblasCapped);
  with_one[count + 2] = nullptr;
  execve("/proc/self/exe", argv, with_one);  // returns only when it fails
  write_text(
      "warning: under this address-space limit (ulimit -v) the program could not run again with "
      "OPENBLAS_NUM_THREADS=1; a GEMM on the CPU, or the exit, may wait for ever on an OpenBLAS "
      "thread that found no room (set OPENBLAS_NUM_THREADS=1 to avoid it)\n");
}

}  // namespace detail

inline bool openblas_threads_capped() {
  const char* capped = std::getenv("GEMM_MLP_OPENBLAS_CAPPED");
  return capped != nullptr && std::strcmp(capped, "1") == 0;
}

}  // namespace gemm_mlp

#define GEMM_MLP_ONE_OPENBLAS_THREAD_UNDER_ADDRESS_LIMIT                                           \
  [[gnu::used, gnu::section(".preinit_array")]] static void (*const gemm_mlp_one_openblas_thread)( \
      int, char**, char**) = &::gemm_mlp::detail::one_openblas_thread_under_address_limit
