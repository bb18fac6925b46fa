// gemm_bench as a user runs it: the host variant without a GPU, and the errors of bad flags, of
// shapes beyond the memory limit and of a missing GPU, each a message and a non-zero exit before
// any case runs. Cases that need a GPU check what the machine has, so the same tests pass with
// or without one (and none skips).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "kernels/cuda_check.h"
#include "run_app.h"

namespace {

using app_test::Result;
using app_test::run;

const std::string kBench = GEMM_BENCH_BINARY;

std::string test_file(const std::string& suffix) {
  return ::testing::TempDir() + "gemm_bench_" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name() + suffix;
}

std::string contents(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(GemmBench, TimesTheCpuVariantWithoutAGpu) {
  const Result r = run(kBench + " --variants cpu --shapes 64,33x17x9:TN --reps 20");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("64x64x64"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("33x17x9"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("FAILED"), std::string::npos) << r.output;
  EXPECT_FAILS_WITH(kBench + " --variants cpu,vec", "time it on its own (--variants cpu)");
}

// Every numeric flag: decimal, finite, in range; CLI11 alone took nan, -1 as 2^64 − 1 and 0x10.
TEST(GemmBench, NumericFlagsAreDecimalFiniteAndInRange) {
  const std::string bench = kBench + " --variants cpu --shapes 8";
  for (const char* bad : {"nan", "inf", "-inf", "0", "-1", "''", "0x10", "1e9", "5s"})
    EXPECT_FAILS_WITH(bench + " --max-seconds-per-case " + bad,
                      std::string("--max-seconds-per-case: must be a finite decimal number in "
                                  "(0, 86400], got '") +
                          (std::string(bad) == "''" ? "" : bad) + "'");
  for (const char* bad : {"-1", "0x10", "''", "18446744073709551616", "1.5", "+1"})
    EXPECT_FAILS_WITH(bench + " --seed " + bad,
                      "--seed: must be a decimal integer in 0 .. 18446744073709551615");
  EXPECT_FAILS_WITH(bench + " --reps 0x20", "--reps: must be a decimal integer in 20 .. 100000");
  EXPECT_FAILS_WITH(bench + " --reps 19", "--reps: must be a decimal integer in 20 .. 100000");
  EXPECT_FAILS_WITH(bench + " --warmup ''", "--warmup: must be a decimal integer in 1 .. 1000");
  EXPECT_FAILS_WITH(kBench + " --device -1", "--device: must be a decimal integer in 0 .. 1023");
  EXPECT_FAILS_WITH(kBench + " --device 0x1", "--device: must be a decimal integer");
  // Leading zeros are decimal, not octal: 030 reps are 30.
  const Result r = run(bench + " --reps 030 --warmup 01 --seed 007");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("1 warm-up + 30 timed runs"), std::string::npos) << r.output;
}

TEST(GemmBench, DeviceDoesNotApplyToTheCpuVariant) {
  EXPECT_FAILS_WITH(kBench + " --variants cpu --device 7",
                    "--device picks a GPU, but --variants cpu runs on the host");
  EXPECT_FAILS_WITH(kBench + " --variants cpu --device 0", "drop --device");
}

// Without a GPU, the error says how to run anyway; with one, a --device beyond the count names
// the count.
TEST(GemmBench, DeviceBeyondTheCountOrNoGpuIsAnError) {
  EXPECT_FAILS_WITH("CUDA_VISIBLE_DEVICES= " + kBench + " --shapes 64",
                    "no NVIDIA driver or GPU found");
  EXPECT_FAILS_WITH("CUDA_VISIBLE_DEVICES= " + kBench + " --shapes 64",
                    "--variants cpu times the host variant without one");
  EXPECT_FAILS_WITH("CUDA_VISIBLE_DEVICES= " + kBench + " --shapes 0x1x1",
                    "bad --shapes entry");  // checked first
  if (gemm_mlp::cuda_device_available())
    EXPECT_FAILS_WITH(kBench + " --variants naive --shapes 64 --device 1000",
                      "--device 1000 out of range: this machine has");
  else
    EXPECT_FAILS_WITH(kBench + " --variants naive --shapes 64 --device 1000",
                      "--variants cpu times the host variant");
}

// The host variant writes --csv and --json; --auto-table (device kernels only) is refused before
// anything runs.
TEST(GemmBench, CpuVariantWritesJsonAndRefusesAutoTable) {
  const std::string json = test_file(".json"), csv = test_file(".csv"), table = test_file(".inc");
  std::remove(json.c_str()), std::remove(csv.c_str()), std::remove(table.c_str());
  const Result r = run(kBench + " --variants cpu --shapes 16 --json " + json + " --csv " + csv);
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string doc = contents(json);
  EXPECT_NE(doc.find("\"name\": \"host CPU (OpenBLAS)\""), std::string::npos) << doc;
  EXPECT_NE(doc.find("\"timing\": \"steady clock"), std::string::npos) << doc;
  EXPECT_NE(doc.find("\"m\": 16"), std::string::npos) << doc;
  EXPECT_NE(contents(csv).find("host CPU (OpenBLAS),16,16,16,NN,cpu"), std::string::npos);
  EXPECT_FAILS_WITH(kBench + " --variants cpu --shapes 16 --auto-table " + table,
                    "--variants cpu times none of them: drop --auto-table");
  EXPECT_FALSE(std::ifstream(table).good()) << table << " was written";
}

// Each shape's memory is checked before the first case: 65536³ needs 48 GiB on the host (112 GiB
// on the GPU); GEMM_MLP_MEMORY_LIMIT makes the limit the same on every machine.
TEST(GemmBench, ShapesBeyondTheMemoryLimitAreRefusedBeforeAnyCase) {
  const std::string limited = "GEMM_MLP_MEMORY_LIMIT=1G " + kBench;
  const Result r = run(limited + " --variants cpu --shapes 64,65536");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--shapes 65536x65536x65536:NN on the cpu variant (A, B and C in fp32) "
                          "needs 48.0 GiB (51539607552 bytes), more than the 1.0 GiB (1073741824 "
                          "bytes) of memory allowed by GEMM_MLP_MEMORY_LIMIT"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("64x64x64"), std::string::npos) << "a case ran first:\n" << r.output;
  if (gemm_mlp::cuda_device_available())
    EXPECT_FAILS_WITH(limited + " --variants naive --shapes 64,65536",
                      "--shapes 65536x65536x65536:NN on the GPU (inputs, outputs, reference and "
                      "error scale in fp32) needs 112.0 GiB");
  EXPECT_FAILS_WITH("GEMM_MLP_MEMORY_LIMIT=lots " + kBench + " --variants cpu --shapes 8",
                    "GEMM_MLP_MEMORY_LIMIT must be a byte count");
}

}  // namespace
