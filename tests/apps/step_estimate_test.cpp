// step_estimate, the step kernel's cost model with parts changed (apps/step_bench/
// step_estimate.cpp): on one block, with every part but one zero, the estimate counts what that
// part is paid for (the GEMM tiles, or their K tiles in one layout); a lever lowers it; bad flags
// are named.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "run_app.h"

namespace {

using app_test::run;

const std::string kEstimate = STEP_ESTIMATE_BINARY;
const std::string kZero = "fixed=0,cluster_sum=0,nt=0,nn=0,tn=0,other=0,handoff=0,update_ns=0";

// The CSV's estimate_us column, a row per case, for one run of step_estimate with `flags`.
std::vector<double> estimates(const std::string& flags) {
  const std::string csv = ::testing::TempDir() + "step_estimate_" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".csv";
  const app_test::Result r = run(kEstimate + " " + flags + " --csv " + csv);
  EXPECT_EQ(r.status, 0) << r.output;
  std::ifstream in(csv);
  std::vector<double> out;
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "model,arithmetic,cluster_size,clusters,case,estimate_us,over_today");
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream row(line);
    for (std::string f; std::getline(row, f, ',');) fields.push_back(f);
    if (fields.size() < 7) {
      ADD_FAILURE() << "a short row: " << line;
      continue;
    }
    out.push_back(std::stod(fields[fields.size() - 2]));
  }
  return out;
}

// 20-48-32-10 in 128×128 tiles: 3 forward tiles of K 20, 48 and 32 (1, 2 and 1 K tiles of 32),
// 2 dX tiles (K 10 and 32) and 3 dW tiles of K = batch.
TEST(StepEstimate, OnOneBlockEachPartCountsWhatItIsPaidFor) {
  const std::string one_block =
      "--models 20-48-32-10:32,20-48-32-10:100 --cluster-size 1 "
      "--clusters 1 ";
  const std::vector<double> got =
      estimates(one_block + "--cost " + kZero + " --cost " + kZero + ",fixed=1 --cost " + kZero +
                ",nt=1 --cost " + kZero + ",nn=1 --cost " + kZero + ",tn=1");
  ASSERT_EQ(got.size(), 12u);
  // today, zero, fixed (8 tiles), NT (4 K tiles), NN (2), TN (3 tiles of 1 and of 4 K tiles)
  const std::vector<double> batch_32 = {0.0, 8.0, 4.0, 2.0, 3.0};
  const std::vector<double> batch_100 = {0.0, 8.0, 4.0, 2.0, 12.0};
  for (size_t i = 0; i < batch_32.size(); ++i) {
    EXPECT_NEAR(got[1 + i], batch_32[i], 1e-3) << "case " << i;
    EXPECT_NEAR(got[7 + i], batch_100[i], 1e-3) << "case " << i;
  }
  EXPECT_GT(got[0], got[2]);  // today's costs more than its tiles' fixed part alone
  EXPECT_GT(got[6], got[0]);  // a larger batch, longer dW K loops
}

TEST(StepEstimate, ALeverLowersTheDefaultModelsStepAndACostRaisesIt) {
  const std::vector<double> got =
      estimates("--cost tn=0.5 --cost fixed=2.5 --cost fixed=10 --arithmetic tf32x3");
  ASSERT_EQ(got.size(), 4u);
  EXPECT_GT(got[0], 0.0);
  EXPECT_LT(got[1], got[0]);
  EXPECT_LT(got[2], got[0]);
  EXPECT_GT(got[3], got[0]);
}

TEST(StepEstimate, BadFlagsAreNamed) {
  EXPECT_FAILS_WITH(kEstimate + " --models 784:256", "at least two widths");
  EXPECT_FAILS_WITH(kEstimate + " --models 784-0-10:256", "must be an integer >= 1, got '0'");
  EXPECT_FAILS_WITH(kEstimate + " --models 784-10:256,", "comma-separated, got '784-10:256,'");
  EXPECT_FAILS_WITH(kEstimate + " --cost foo=1", "PART one of fixed");
  EXPECT_FAILS_WITH(kEstimate + " --cost tn=-1", "--cost tn must be a finite decimal number >= 0");
  EXPECT_FAILS_WITH(kEstimate + " --cost tn=1,", "got 'tn=1,'");
  EXPECT_FAILS_WITH(kEstimate + " --clusters 0", "--clusters: must be a decimal integer");
  EXPECT_FAILS_WITH(kEstimate + " --cluster-size 3", "--cluster-size");
  EXPECT_FAILS_WITH(kEstimate + " --csv /nonexistent/dir/x.csv", "--csv: cannot write");
}

}  // namespace
