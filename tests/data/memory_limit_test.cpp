// kernels/memory_limit.h: the sizes, the arithmetic that cannot wrap, and the error's wording.
#include "kernels/memory_limit.h"

#include <gtest/gtest.h>

#include <limits>

#include "expect_error.h"

namespace {

using gemm_mlp::byte_product;
using gemm_mlp::byte_sum;
using gemm_mlp::byte_text;
using gemm_mlp::check_allocation;
using gemm_mlp::MemoryLimit;
constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

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
  const MemoryLimit host = gemm_mlp::host_memory_limit();
  EXPECT_GT(host.bytes, uint64_t{1} << 20);
  EXPECT_LT(host.bytes, kMax);
  EXPECT_NE(host.source.find("host memory available"), std::string::npos) << host.source;
}

}  // namespace
