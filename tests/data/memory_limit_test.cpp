// base/memory_limit.h: the sizes, the arithmetic that cannot wrap, and the error's wording.
#include "base/memory_limit.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "expect_error.h"
#include "test_files.h"

namespace {

using gemm_mlp::byte_product;
using gemm_mlp::byte_sum;
using gemm_mlp::byte_text;
using gemm_mlp::check_allocation;
using gemm_mlp::MemoryLimit;
constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

// GEMM_MLP_MEMORY_LIMIT set (or unset, for nullopt) for the test's lifetime, restored after.
class ScopedLimit {
 public:
  explicit ScopedLimit(std::optional<std::string> value) {
    if (const char* old = std::getenv(gemm_mlp::kMemoryLimitVariable)) old_ = old;
    if (value)
      ::setenv(gemm_mlp::kMemoryLimitVariable, value->c_str(), 1);
    else
      ::unsetenv(gemm_mlp::kMemoryLimitVariable);
  }
  ~ScopedLimit() {
    if (old_)
      ::setenv(gemm_mlp::kMemoryLimitVariable, old_->c_str(), 1);
    else
      ::unsetenv(gemm_mlp::kMemoryLimitVariable);
  }

 private:
  std::optional<std::string> old_;
};

TEST(MemoryLimit, ByteText) {
  EXPECT_EQ(byte_text(0), "0 bytes");
  EXPECT_EQ(byte_text(1023), "1023 bytes");
  EXPECT_EQ(byte_text(1536), "1.5 KiB (1536 bytes)");
  EXPECT_EQ(byte_text(uint64_t{3} << 34), "48.0 GiB (51539607552 bytes)");
}

TEST(MemoryLimit, ProductsAndSumsSaturateInsteadOfWrapping) {
  EXPECT_EQ(byte_product({65536, 65536, 4}), uint64_t{1} << 34);
  EXPECT_EQ(byte_product({uint64_t{1} << 32, uint64_t{1} << 32}), kMax);
  EXPECT_EQ(byte_product({0, kMax, kMax}), 0u);
  EXPECT_EQ(byte_sum({1, 2, 3}), 6u);
  EXPECT_EQ(byte_sum({kMax, 1}), kMax);
}

TEST(MemoryLimit, ErrorNamesTheSizeTheSourceAndTheLimit) {
  const MemoryLimit limit{uint64_t{1} << 30, "test memory"};
  EXPECT_NO_THROW(check_allocation(uint64_t{1} << 30, limit, "f: shape 1"));
  EXPECT_THROW_WITH(check_allocation((uint64_t{1} << 30) + 1, limit, "f: shape 2"), gemm_mlp::Error,
                    "f: shape 2 needs 1.0 GiB (1073741825 bytes), more than the 1.0 GiB "
                    "(1073741824 bytes) of test memory");
  EXPECT_THROW_WITH(check_allocation(kMax, limit, "f"), gemm_mlp::Error,
                    "f needs more than 2^64 bytes");
}

TEST(MemoryLimit, HostLimitIsTheMemoryAvailable) {
  const ScopedLimit unset(std::nullopt);
  const MemoryLimit host = gemm_mlp::host_memory_limit();
  EXPECT_GT(host.bytes, uint64_t{1} << 20);
  EXPECT_LT(host.bytes, kMax);
  // MemAvailable, or a container's cgroup where that limits it.
  EXPECT_TRUE(host.source.find("host memory available") != std::string::npos ||
              host.source.find("memory left in this container") != std::string::npos)
      << host.source;
}

// Under an address-space limit (ulimit -v), the host limit is what the limit leaves: an allocation
// beyond it would fail however much memory the machine has available.
TEST(MemoryLimit, AddressSpaceLimitLowersTheHostLimit) {
  EXPECT_EQ(gemm_mlp::address_space_left(kMax, 123).bytes, kMax);
  const MemoryLimit left = gemm_mlp::address_space_left(uint64_t{10} << 30, uint64_t{1} << 30);
  EXPECT_EQ(left.bytes, uint64_t{9} << 30);
  EXPECT_EQ(left.source,
            "address space left under this process's limit (ulimit -v, RLIMIT_AS: 10.0 GiB "
            "(10737418240 bytes), of which 1.0 GiB (1073741824 bytes) mapped already)");
  EXPECT_EQ(gemm_mlp::address_space_left(100, 200).bytes, 0u);
  // This process's own limit, lowered to what it maps now and 256 MiB more.
  const ScopedLimit unset(std::nullopt);
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_AS, &saved), 0);
  if (saved.rlim_cur == RLIM_INFINITY) {
    EXPECT_EQ(gemm_mlp::address_space_left().bytes, kMax);
  }
  MemoryLimit host;
  std::string error;
  {
    const data_test::ScopedAddressSpaceLimit lowered(uint64_t{256} << 20);
    ASSERT_TRUE(lowered.ok());
    host = gemm_mlp::host_memory_limit();
    error =
        data_test::error_of([] { gemm_mlp::check_host_allocation(uint64_t{1} << 30, "1 GiB"); });
  }
  EXPECT_LE(host.bytes, uint64_t{256} << 20);
  EXPECT_NE(host.source.find("ulimit -v, RLIMIT_AS"), std::string::npos) << host.source;
  EXPECT_NE(error.find("1 GiB needs 1.0 GiB (1073741824 bytes), more than the "), std::string::npos)
      << error;
  EXPECT_NE(error.find("address space left under this process's limit"), std::string::npos)
      << error;
}

TEST(MemoryLimit, CgroupMemoryLeftIsItsLimitLessItsUse) {
  data_test::TempDir dir;
  const std::string max = dir.file("memory.max"), current = dir.file("memory.current");
  data_test::write_file(max, {'1', '0', '0', '0', '\n'});
  data_test::write_file(current, {'2', '5', '0', '\n'});
  EXPECT_EQ(gemm_mlp::cgroup_memory_left(max, current), 750u);
  data_test::write_file(current, {'2', '0', '0', '0', '\n'});  // over its limit: nothing left
  EXPECT_EQ(gemm_mlp::cgroup_memory_left(max, current), 0u);
  data_test::write_file(max, {'m', 'a', 'x', '\n'});  // cgroup v2's "no limit"
  EXPECT_EQ(gemm_mlp::cgroup_memory_left(max, current), kMax);
  EXPECT_EQ(gemm_mlp::cgroup_memory_left(dir.file("none"), current), kMax);
}

TEST(MemoryLimit, EnvironmentParsesByteCounts) {
  using gemm_mlp::parse_memory_limit;
  EXPECT_EQ(parse_memory_limit("1073741824"), uint64_t{1} << 30);
  EXPECT_EQ(parse_memory_limit("512K"), uint64_t{512} << 10);
  EXPECT_EQ(parse_memory_limit("512M"), uint64_t{512} << 20);
  EXPECT_EQ(parse_memory_limit("2GiB"), uint64_t{2} << 30);
  EXPECT_EQ(parse_memory_limit("3T"), uint64_t{3} << 40);
  for (const char* bad : {"", "G", "-1", "1.5G", "1g", "1GB", "1 G", "0x10", "1Gi", "1KiBB",
                          "99999999999999999999", "16777216T"})
    EXPECT_THROW_WITH(parse_memory_limit(bad), gemm_mlp::Error,
                      std::string("GEMM_MLP_MEMORY_LIMIT must be a byte count such as "
                                  "1073741824, 512M or 1G, got '") +
                          bad + "'");
}

TEST(MemoryLimit, EnvironmentLowersTheHostLimitOnly) {
  {
    const ScopedLimit limit("1M");
    const MemoryLimit host = gemm_mlp::host_memory_limit();
    EXPECT_EQ(host.bytes, uint64_t{1} << 20);
    EXPECT_EQ(host.source, "memory allowed by GEMM_MLP_MEMORY_LIMIT");
    EXPECT_THROW_WITH(gemm_mlp::check_host_allocation((uint64_t{1} << 20) + 1, "f"),
                      gemm_mlp::Error,
                      "f needs 1.0 MiB (1048577 bytes), more than the 1.0 MiB (1048576 bytes) of "
                      "memory allowed by GEMM_MLP_MEMORY_LIMIT");
  }
  {
    const ScopedLimit limit("16383T");  // more than any machine: the machine's limit stays
    EXPECT_EQ(gemm_mlp::host_memory_limit().source.find("GEMM_MLP_MEMORY_LIMIT"),
              std::string::npos);
  }
  const ScopedLimit limit("lots");
  EXPECT_THROW_WITH(gemm_mlp::host_memory_limit(), gemm_mlp::Error, "got 'lots'");
}

}  // namespace
