// Scratch files for the data tests: a fresh directory per test, IDX bytes, gzip through zlib.
#pragma once

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data/idx.h"

namespace data_test {

using Bytes = std::vector<uint8_t>;

// A directory removed with its contents when the test ends.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("gemm_mlp_data_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string str() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

inline Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_gz(const std::string& path, const Bytes& bytes) {
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr) << "cannot write " << path;
  const int n = bytes.empty() ? 0 : gzwrite(gz, bytes.data(), static_cast<unsigned>(bytes.size()));
  ASSERT_EQ(gzclose(gz), Z_OK);
  ASSERT_EQ(n, static_cast<int>(bytes.size()));
}

// An IDX header (type byte 0x08 unless given) followed by `values`.
inline Bytes idx_bytes(const std::vector<uint32_t>& dims, const Bytes& values,
                       uint8_t type = 0x08) {
  Bytes b = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) b.push_back(static_cast<uint8_t>(d >> shift));
  b.insert(b.end(), values.begin(), values.end());
  return b;
}

// 0, 1, 2, ... (mod 256), n of them.
inline Bytes iota_bytes(size_t n) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(i);
  return b;
}

// The message of the gemm_mlp::Error that f throws; a test failure if it throws none.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const gemm_mlp::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a gemm_mlp::Error";
  return "";
}

// Every part must appear in the message.
inline void expect_mentions(const std::string& message, const std::vector<std::string>& parts) {
  for (const std::string& part : parts)
    EXPECT_NE(message.find(part), std::string::npos)
        << "message \"" << message << "\" does not mention \"" << part << "\"";
}

// This process's address-space limit (RLIMIT_AS, as `ulimit -v` sets it) lowered to what it maps
// now and `extra` bytes more, for the object's lifetime, then restored.
class ScopedAddressSpaceLimit {
 public:
  explicit ScopedAddressSpaceLimit(uint64_t extra) {
    ok_ = ::getrlimit(RLIMIT_AS, &saved_) == 0;
    std::ifstream status("/proc/self/status");
    uint64_t mapped_kib = 0;
    for (std::string key; status >> key;)
      if (key == "VmSize:" && status >> mapped_kib) break;
    struct rlimit lowered = saved_;
    lowered.rlim_cur = mapped_kib * 1024 + extra;
    ok_ = ok_ && mapped_kib > 0 && ::setrlimit(RLIMIT_AS, &lowered) == 0;
  }
  ~ScopedAddressSpaceLimit() {
    if (ok_) ::setrlimit(RLIMIT_AS, &saved_);
  }
  ScopedAddressSpaceLimit(const ScopedAddressSpaceLimit&) = delete;
  ScopedAddressSpaceLimit& operator=(const ScopedAddressSpaceLimit&) = delete;
  bool ok() const { return ok_; }

 private:
  struct rlimit saved_ {};
  bool ok_ = false;
};

}  // namespace data_test
