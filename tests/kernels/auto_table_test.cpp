// The `auto` variant's table and choice (kernels/auto_table.h), without a GPU: the shipped table
// names only device fp32 kernels of this project, once per shape, and the choice is the entry of
// the same GPU and layout nearest in log space, or `fast`.
#include "kernels/auto_table.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/gemm.h"

namespace {

using gemm::Op;
using gemm::detail::auto_choice;
using gemm::detail::AutoEntry;

gemm::Problem shape(int m, int n, int k, Op op_a = Op::N, Op op_b = Op::N) {
  gemm::Problem p;
  p.m = m, p.n = n, p.k = k, p.op_a = op_a, p.op_b = op_b;
  return p;
}

// A regenerated auto_table.inc is checked here before any GPU runs it: launch_auto would throw
// at the first call that picks a bad entry.
TEST(GemmAutoTable, ShippedTableNamesDeviceFp32KernelsOncePerShape) {
  const std::vector<AutoEntry>& table = gemm::detail::auto_table();
  ASSERT_FALSE(table.empty());
  std::set<std::tuple<std::string, std::string, int, int, int>> seen;
  for (const AutoEntry& e : table) {
    const std::string where = std::string(e.device) + " " + e.layout + " " + std::to_string(e.m) +
                              "x" + std::to_string(e.n) + "x" + std::to_string(e.k);
    const gemm::Variant& v = gemm::find_variant(e.variant);  // throws for an unknown name
    EXPECT_EQ(v.device, gemm::Device::CUDA) << where << ": " << e.variant;
    EXPECT_EQ(v.precision, gemm::Precision::FP32) << where << ": " << e.variant;
    EXPECT_NE(std::string(e.variant), "auto") << where;
    EXPECT_NE(std::string(e.variant).rfind("cublas", 0), 0u) << where << ": " << e.variant;
    EXPECT_TRUE(std::set<std::string>({"NN", "NT", "TN", "TT"}).count(e.layout)) << where;
    EXPECT_TRUE(e.m >= 1 && e.n >= 1 && e.k >= 1) << where;
    EXPECT_TRUE(seen.insert({e.device, e.layout, e.m, e.n, e.k}).second) << where << " twice";
  }
}

const std::vector<AutoEntry> kTable = {
    {"GPU A", "NN", 256, 1024, 1024, "tf32x3_fast"}, {"GPU A", "NN", 4096, 4096, 4096, "tf32x3_ws"},
    {"GPU A", "NN", 128, 512, 512, "warptile"},      {"GPU A", "NT", 256, 1024, 784, "dbuf"},
    {"GPU A", "NT", 256, 1024, 784 * 4, "regtile"},  // as near as dbuf's to 256x1024x1568
    {"GPU B", "NN", 128, 512, 512, "vec"},
};

TEST(GemmAutoTable, MeasuredShapePicksItsOwnEntry) {
  EXPECT_STREQ(auto_choice(kTable, "GPU A", shape(256, 1024, 1024)), "tf32x3_fast");
  EXPECT_STREQ(auto_choice(kTable, "GPU A", shape(4096, 4096, 4096)), "tf32x3_ws");
  EXPECT_STREQ(auto_choice(kTable, "GPU A", shape(128, 512, 512)), "warptile");
  EXPECT_STREQ(auto_choice(kTable, "GPU B", shape(128, 512, 512)), "vec");
  EXPECT_STREQ(auto_choice(kTable, "GPU A", shape(256, 1024, 784, Op::N, Op::T)), "dbuf");
}

// Between measured shapes: the nearest in log space, each dimension's factor counted alike.
TEST(GemmAutoTable, BetweenShapesTheNearestInLogSpace) {
  // 200x777x333: 0.36 + 0.40 + 1.62 = 2.37 from 256x1024x1024, 0.64 + 0.60 + 0.62 = 1.87 from
  // 128x512x512, 10.4 from 4096³.
  EXPECT_STREQ(auto_choice(kTable, "GPU A", shape(200, 777, 333)), "warptile");
  // 230x900x900: 0.15 + 0.19 + 0.19 = 0.53 from 256x1024x1024, 2.47 from 128x512x512.
  EXPECT_STREQ(auto_choice(kTable, "GPU A", shape(230, 900, 900)), "tf32x3_fast");
  // 2048³ is 3 from 4096³ and 5 from 256x1024x1024; 8192³ only nears 4096³.
  EXPECT_STREQ(auto_choice(kTable, "GPU A", shape(2048, 2048, 2048)), "tf32x3_ws");
  EXPECT_STREQ(auto_choice(kTable, "GPU A", shape(8192, 8192, 8192)), "tf32x3_ws");
  // K = 1568 is a factor 2 from both NT entries' K: the first in table order.
  EXPECT_STREQ(auto_choice(kTable, "GPU A", shape(256, 1024, 1568, Op::N, Op::T)), "dbuf");
}

// Only the same GPU's entries of the same layout count; without one, fast.
TEST(GemmAutoTable, OtherLayoutsAndGpusFallBackToFast) {
  EXPECT_STREQ(gemm::detail::kAutoFallback, "fast");
  EXPECT_STREQ(auto_choice(kTable, "GPU A", shape(256, 1024, 1024, Op::T, Op::N)), "fast");
  EXPECT_STREQ(auto_choice(kTable, "GPU B", shape(256, 1024, 784, Op::N, Op::T)), "fast");
  EXPECT_STREQ(auto_choice(kTable, "GPU C", shape(128, 512, 512)), "fast");
  EXPECT_STREQ(auto_choice({}, "GPU A", shape(128, 512, 512)), "fast");
}

}  // namespace
