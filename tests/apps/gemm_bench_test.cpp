// gemm_bench as a user runs it: the host variant without a GPU, the `auto` table written from
// earlier runs' JSON (--from-json), and the errors of bad flags, of bad results files, of shapes
// beyond the memory limit and of a missing GPU, each a message and a non-zero exit before any
// case runs. Cases that need a GPU check what the machine has, so the same tests pass with
// or without one (and none skips).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/common/number_flags.h"
#include "apps/common/strict_flags.h"
#include "base/cuda_check.h"
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

// What a validator makes of text: "" when accepted (text then canonical), else the error.
std::string validated(const CLI::Validator& v, std::string& text) { return v(text); }

TEST(NumberFlags, DecimalIntegersOnlyInRange) {
  const CLI::Validator v = apps::decimal_integer(-5, 100);
  for (auto [in, out] : {std::pair{"7", "7"}, {"007", "7"}, {"-5", "-5"}, {"100", "100"}}) {
    std::string text = in;
    EXPECT_EQ(validated(v, text), "") << in;
    EXPECT_EQ(text, out);
  }
  for (const char* bad :
       {"", "-", "101", "-6", "0x10", "1e2", "+1", " 1", "1 ", "1.0", "99999999999999999999"}) {
    std::string text = bad;
    EXPECT_EQ(validated(v, text),
              std::string("must be a decimal integer in -5 .. 100, got '") + bad + "'");
  }
  std::string minus = "-1";
  EXPECT_NE(validated(apps::decimal_integer(0, 9), minus), "");  // no sign when min >= 0
}

// apps/common/strict_flags.h: a switch given a value, and an empty item in a list, are errors.
TEST(StrictFlags, ASwitchGivenAValueIsNamed) {
  CLI::App app{"t"};
  bool on = false;
  std::string text;
  app.add_flag("--serial-step", on, "a switch");
  app.add_option("--save", text, "takes a value");
  const auto check = [&](std::vector<std::string> args) {
    std::vector<char*> argv{const_cast<char*>("app")};
    for (std::string& a : args) argv.push_back(a.data());
    return apps::switch_given_a_value(app, static_cast<int>(argv.size()), argv.data());
  };
  EXPECT_EQ(check({"--serial-step=2"}).value_or(""),
            "--serial-step is a switch and takes no value, got '--serial-step=2' (give "
            "--serial-step alone, or leave it out)");
  EXPECT_TRUE(check({"--serial-step=true"}).has_value());
  EXPECT_FALSE(check({"--serial-step"}).has_value());
  EXPECT_FALSE(check({"--save=a=b"}).has_value());             // an option's value
  EXPECT_FALSE(check({"--", "--serial-step=2"}).has_value());  // not an option after --
}

TEST(StrictFlags, AnEmptyListItemIsNamed) {
  EXPECT_EQ(apps::comma_list("--shapes", {"64,33x17x9:TN", "8"}),
            (std::vector<std::string>{"64", "33x17x9:TN", "8"}));
  for (const char* bad : {"64,,64", "cpu,", ",cpu", ""}) {
    try {
      apps::comma_list("--variants", {bad});
      ADD_FAILURE() << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(e.what(), std::string("--variants '") + bad +
                              "': an empty item (a comma at an end, or two together)");
    }
  }
}

TEST(NumberFlags, DecimalUnsignedToTwoToThe64) {
  const CLI::Validator v = apps::decimal_unsigned();
  std::string max = "18446744073709551615", padded = "0010";
  EXPECT_EQ(validated(v, max), "");
  EXPECT_EQ(validated(v, padded), "");
  EXPECT_EQ(padded, "10");
  for (const char* bad : {"", "-1", "18446744073709551616", "0x10", "+1", "1.5"}) {
    std::string text = bad;
    EXPECT_EQ(validated(v, text), std::string("must be a decimal integer in 0 .. "
                                              "18446744073709551615, got '") +
                                      bad + "'");
  }
}

TEST(NumberFlags, FiniteNumbersInRange) {
  const CLI::Validator v = apps::finite_number(0, 10, true);
  for (const char* good : {"1", "0.5", "1e1", "2.5E-3", "10"}) {
    std::string text = good;
    EXPECT_EQ(validated(v, text), "") << good;
  }
  for (const char* bad :
       {"", "0", "-1", "10.01", "nan", "NAN", "inf", "-inf", "0x1p3", "1e999", "1,5", "5s", "."}) {
    std::string text = bad;
    EXPECT_EQ(validated(v, text),
              std::string("must be a finite decimal number in (0, 10], got '") + bad + "'");
  }
  std::string zero = "0";
  EXPECT_EQ(validated(apps::finite_number(0, 1), zero), "");  // [0, 1] takes 0
}

TEST(GemmBench, TimesTheCpuVariantWithoutAGpu) {
  const Result r = run(kBench + " --variants cpu --shapes 64,33x17x9:TN --reps 20");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("64x64x64"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("33x17x9"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("FAILED"), std::string::npos) << r.output;
  EXPECT_FAILS_WITH(kBench + " --variants cpu,vec", "time it on its own (--variants cpu)");
}

// Every numeric flag goes through number_flags.h (tested above): the probe's values, one a flag.
TEST(GemmBench, NumericFlagsAreDecimalFiniteAndInRange) {
  const std::string bench = kBench + " --variants cpu --shapes 8";
  EXPECT_FAILS_WITH(bench + " --max-seconds-per-case nan",
                    "--max-seconds-per-case: must be a finite decimal number in (0, 86400], got "
                    "'nan'");
  EXPECT_FAILS_WITH(bench + " --seed -1",
                    "--seed: must be a decimal integer in 0 .. 18446744073709551615, got '-1'");
  EXPECT_FAILS_WITH(bench + " --reps 0x20", "--reps: must be a decimal integer in 20 .. 100000");
  EXPECT_FAILS_WITH(bench + " --warmup ''", "--warmup: must be a decimal integer in 1 .. 1000");
  EXPECT_FAILS_WITH(kBench + " --device -1", "--device: must be a decimal integer in 0 .. 1023");
  EXPECT_FAILS_WITH(kBench + " --warm-calls 1001",
                    "--warm-calls: must be a decimal integer in 0 .. 1000");
  EXPECT_FAILS_WITH(kBench + " --warm-replays 2",
                    "--warm-replays: must be a decimal integer in 3 .. 10000");
  // Leading zeros are decimal, not octal: 030 reps are 30.
  const Result r = run(bench + " --reps 030 --warmup 01 --seed 007");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("1 warm-up + 30 timed runs"), std::string::npos) << r.output;
}

// The warm timing runs device variants in a CUDA graph: the host variant refuses its flags.
TEST(GemmBench, WarmFlagsDoNotApplyToTheCpuVariant) {
  EXPECT_FAILS_WITH(kBench + " --variants cpu --shapes 8 --warm-calls 5",
                    "--warm-calls times device variants in a CUDA graph; --variants cpu runs on "
                    "the host: drop --warm-calls");
  EXPECT_FAILS_WITH(kBench + " --variants cpu --shapes 8 --warm-replays 5", "drop --warm-replays");
}

// --phases needs a build with the in-kernel timestamps; an ordinary build says how to make one,
// before any GPU is needed.
TEST(GemmBench, PhasesNeedTheTimestampBuild) {
  EXPECT_FAILS_WITH(kBench + " --phases",
                    "--phases needs the in-kernel timestamps: configure a build with "
                    "-DGEMM_MLP_PHASE_TIMES=ON");
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

// Output files are checked before the first case: a long run must not end unable to write.
TEST(GemmBench, OutputPathsAreCheckedBeforeAnyCase) {
  const std::string bench = kBench + " --variants cpu --shapes 8";
  const Result r = run(bench + " --json /nonexistent-dir/r.json");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--json /nonexistent-dir/r.json: the folder /nonexistent-dir does "
                          "not exist or is not writable"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("8x8x8"), std::string::npos) << "a case ran first:\n" << r.output;
  EXPECT_FAILS_WITH(bench + " --csv " + ::testing::TempDir(), "names a folder; give a file name");
  EXPECT_FAILS_WITH(bench + " --json ''", "--json needs a file name");
  // Blank names, as train_mlp refuses them (apps/common/output_file.h).
  EXPECT_FAILS_WITH(bench + " --csv ' '", "--csv ' ': the file name is blank");
  EXPECT_FAILS_WITH(bench + " --json ' '", "--json ' ': the file name is blank");
  EXPECT_FAILS_WITH(bench + " --csv ' r.csv'",
                    "--csv ' r.csv': the file name begins or ends with a space");
  EXPECT_FALSE(std::ifstream(" ").good()) << "a file named ' ' was written";
}

// A write that fails at the end of the run (here: the file size limit, as a full disk would) is
// an error naming the system's reason, and the file written before stays whole: every output goes
// through the atomic writer (engine/atomic_file.h), never in place.
TEST(GemmBench, AFailedWriteNamesTheReasonAndKeepsTheOldFile) {
  for (const char* flag : {"--csv", "--json"}) {
    SCOPED_TRACE(flag);
    const std::string out = test_file(std::string("_kept") + (flag[2] == 'c' ? ".csv" : ".json"));
    const std::string old(8192, 'x');
    std::ofstream(out) << old;
    // SIGXFSZ ignored: a write past the limit fails with EFBIG instead of ending the process.
    const Result r = run("sh -c \"trap '' XFSZ; ulimit -f 0; exec " + kBench +
                         " --variants cpu --shapes 8,16 " + flag + " " + out + "\"");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find(std::string(flag) + " " + out +
                            ": writing it failed: File too large; " + out + " is unchanged"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(contents(out), old);
    const std::string name = out.substr(out.rfind('/') + 1);
    EXPECT_EQ(run("ls -a " + ::testing::TempDir() + " | grep -c '" + name + ".tmp'").output, "0\n");
  }
}

// A FIFO as --csv, --json or --auto-table is refused before any case (writing it would wait for a
// reader, after the whole run; `timeout` ends such a wait as exit status 124), and so is a name
// the file system cannot take, a folder nothing can be created in or a device (/dev/null); an
// existing file is left as it was by the check.
TEST(GemmBench, OutputFifosAndUnwritableNamesAreRefusedBeforeAnyCase) {
  const std::string bench = "timeout 20 " + kBench + " --variants cpu --shapes 8";
  const std::string fifo = test_file("_fifo.csv");
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const char* flag : {" --csv ", " --json ", " --auto-table "}) {
    const Result r = run(bench + flag + fifo);
    EXPECT_EQ(r.status, 2) << flag << r.output;
    EXPECT_NE(r.output.find(fifo + ": exists and is a FIFO (named pipe), not a regular file"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("8x8x8"), std::string::npos) << "a case ran first:\n" << r.output;
  }
  struct stat st {};
  EXPECT_TRUE(::lstat(fifo.c_str(), &st) == 0 && S_ISFIFO(st.st_mode));
  std::remove(fifo.c_str());
  const std::string long_name = ::testing::TempDir() + std::string(300, 'n') + ".csv";
  const Result r = run(bench + " --csv " + long_name);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("the name is too long for the file system"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("8x8x8"), std::string::npos) << "a case ran first:\n" << r.output;
  const Result proc = run(bench + " --json /proc/r.json");  // root may write in /proc, not create
  EXPECT_EQ(proc.status, 2) << proc.output;
  EXPECT_TRUE(proc.output.find("--json /proc/r.json: cannot be written") != std::string::npos ||
              proc.output.find("the folder /proc does not exist or is not writable") !=
                  std::string::npos)
      << proc.output;
  // The check neither creates a new file nor changes an existing one.
  const std::string kept = test_file("_kept.csv"), fresh = test_file("_fresh.csv");
  std::remove(fresh.c_str());
  std::ofstream(kept) << "old\n";
  EXPECT_FAILS_WITH(
      bench + " --csv " + kept + " --json " + fresh + " --auto-table " + ::testing::TempDir(),
      "names a folder; give a file name");
  EXPECT_EQ(contents(kept), "old\n");
  EXPECT_FALSE(std::ifstream(fresh).good()) << fresh << " was left";
  // A device is not replaced by the rename that writes a file, as train_mlp's outputs are not.
  EXPECT_FAILS_WITH(bench + " --csv /dev/null",
                    "--csv /dev/null: exists and is a character device, not a regular file");
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

// --from-json: a results file as gemm_bench --json writes it, with only the fields it reads.
struct BenchRow {
  int m, n, k;
  const char* layout;
  const char* variant;
  const char* status;
  const char* ms;                 // "null" when not timed
  const char* warm_us = nullptr;  // the field left out when null (a run before warm timing)
};

void write_results(const std::string& path, const std::string& device,
                   const std::vector<BenchRow>& rows) {
  std::ofstream f(path);
  f << "{\"device\": {\"name\": \"" << device << "\"}, \"results\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    const BenchRow& r = rows[i];
    f << (i ? ", " : "") << "{\"m\": " << r.m << ", \"n\": " << r.n << ", \"k\": " << r.k
      << ", \"layout\": \"" << r.layout << "\", \"variant\": \"" << r.variant
      << "\", \"precision\": \"FP32\", \"status\": \"" << r.status << "\", \"ms_median\": " << r.ms;
    if (r.warm_us) f << ", \"warm_us_median\": " << r.warm_us;
    f << "}";
  }
  f << "]}\n";
}

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

const std::string kTableHeader =
    "// Written by gemm_bench --auto-table; one line per measured shape and layout:\n"
    "// {device, layout, M, N, K, fastest correct fp32 variant of this project},\n"
    "// medians within 5% of the fastest a tie, won by the variant listed first.\n";

// Per shape, the fastest timed fp32 kernel of this project: not a faster one that failed, was
// skipped, is TF32, cuBLAS or auto. A shape measured again in a later file takes that file's
// results (4096³: b's tf32x3_fast, though a's fast was faster). Lines by layout, then M, N, K.
TEST(GemmBench, AutoTableFromJsonTakesTheFastestCorrectFp32KernelPerShape) {
  const std::string a = test_file("_a.json"), b = test_file("_b.json"), table = test_file(".inc");
  write_results(a, "GPU X",
                {{256, 1024, 784, "NT", "fast", "ok", "1.0"},
                 {256, 1024, 784, "NT", "tf32x3_fast", "ok", "0.8"},
                 {256, 1024, 784, "NT", "tf32x3", "FAILED", "0.7"},
                 {256, 1024, 784, "NT", "warptile", "skipped", "null"},
                 {256, 1024, 784, "NT", "tf32_fast", "ok", "0.1"},
                 {256, 1024, 784, "NT", "cublas", "ok", "0.5"},
                 {256, 1024, 784, "NT", "auto", "ok", "0.2"},
                 {4096, 4096, 4096, "NN", "fast", "ok", "8.0"},
                 {64, 64, 64, "NN", "naive", "ok", "0.03"},
                 {64, 64, 64, "NN", "vec", "capped", "0.02"}});
  write_results(b, "GPU X",
                {{4096, 4096, 4096, "NN", "regtile", "ok", "12.0"},
                 {4096, 4096, 4096, "NN", "tf32x3_fast", "ok", "9.0"}});
  const Result r = run(kBench + " --from-json " + a + "," + b + " --auto-table " + table);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("from 11 results of 2 runs on GPU X"), std::string::npos) << r.output;
  EXPECT_EQ(contents(table), kTableHeader + "// From: " + file_name(a) + " " + file_name(b) + "\n" +
                                 "{\"GPU X\", \"NN\", 64, 64, 64, \"vec\"},\n"
                                 "{\"GPU X\", \"NN\", 4096, 4096, 4096, \"tf32x3_fast\"},\n"
                                 "{\"GPU X\", \"NT\", 256, 1024, 784, \"tf32x3_fast\"},\n");
}

// Where every candidate of a shape was timed warm, the warm medians decide (256×1024×784: fast,
// though tf32x3_fast was faster flushed); where one was not (4096³), the flushed ones do.
TEST(GemmBench, AutoTablePicksByWarmTimesWhereEveryCandidateHasOne) {
  const std::string a = test_file(".json"), table = test_file(".inc");
  write_results(a, "GPU X",
                {{256, 1024, 784, "NT", "fast", "ok", "0.020", "9.0"},
                 {256, 1024, 784, "NT", "tf32x3_fast", "ok", "0.017", "12.8"},
                 {4096, 4096, 4096, "NN", "fast", "ok", "3.0", "2000"},
                 {4096, 4096, 4096, "NN", "tf32x3_fast", "ok", "1.2"}});
  const Result r = run(kBench + " --from-json " + a + " --auto-table " + table);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(contents(table), kTableHeader + "// From: " + file_name(a) + "\n" +
                                 "{\"GPU X\", \"NN\", 4096, 4096, 4096, \"tf32x3_fast\"},\n"
                                 "{\"GPU X\", \"NT\", 256, 1024, 784, \"fast\"},\n");
}

// Medians within 5% of the fastest are a tie, won by the variant first in the registry's order
// (naive before vec before tf32x3_fast), whichever order the results come in; 5% or more apart,
// the faster wins.
TEST(GemmBench, AutoTableBreaksNearTiesByTheRegistrysOrder) {
  const std::string a = test_file(".json"), table = test_file(".inc");
  write_results(a, "GPU X",
                {{128, 512, 10, "NN", "tf32x3_fast", "ok", "0.00490"},
                 {128, 512, 10, "NN", "vec", "ok", "0.00496"},
                 {128, 512, 10, "NN", "naive", "ok", "0.00510"},
                 {256, 1024, 10, "NN", "tf32x3_fast", "ok", "0.00500"},
                 {256, 1024, 10, "NN", "naive", "ok", "0.00530"},
                 {256, 1024, 10, "NN", "vec", "ok", "0.00520"}});
  const Result r = run(kBench + " --from-json " + a + " --auto-table " + table);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(contents(table), kTableHeader + "// From: " + file_name(a) + "\n" +
                                 "{\"GPU X\", \"NN\", 128, 512, 10, \"naive\"},\n"
                                 "{\"GPU X\", \"NN\", 256, 1024, 10, \"vec\"},\n");
}

// A shape where no fp32 kernel of this project was timed gets no line, is named, and fails the
// run; the other shapes are written.
TEST(GemmBench, AutoTableNamesAShapeWithoutACandidate) {
  const std::string a = test_file(".json"), table = test_file(".inc");
  write_results(a, "GPU X",
                {{32, 32, 32, "TN", "tf32", "ok", "0.01"},
                 {32, 32, 32, "TN", "fast", "FAILED", "0.02"},
                 {64, 64, 64, "NN", "fast", "ok", "0.03"}});
  const Result r = run(kBench + " --from-json " + a + " --auto-table " + table);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("has no line for 32x32x32:TN: no fp32 kernel of this project was timed"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(contents(table), kTableHeader + "// From: " + file_name(a) + "\n" +
                                 "{\"GPU X\", \"NN\", 64, 64, 64, \"fast\"},\n");
}

// Runs on two GPUs: each GPU's lines from its own runs (a later run of the same GPU replacing an
// earlier one's shape, never another GPU's), in the order the runs first name the GPUs; a shape
// without a candidate is named with its GPU.
TEST(GemmBench, AutoTableFromRunsOnTwoGpusHasEachGpusLines) {
  const std::string a = test_file("_a.json"), b = test_file("_b.json"), c = test_file("_c.json");
  const std::string table = test_file(".inc");
  write_results(
      a, "GPU Y",
      {{64, 64, 64, "NN", "fast", "ok", "0.03"}, {64, 64, 64, "NN", "dbuf", "ok", "0.02"}});
  write_results(b, "GPU X",
                {{64, 64, 64, "NN", "fast", "ok", "0.01"},
                 {64, 64, 64, "NN", "dbuf", "ok", "0.02"},
                 {32, 32, 32, "TN", "fast", "FAILED", "0.02"}});
  write_results(c, "GPU Y", {{128, 128, 128, "NT", "tf32x3_fast", "ok", "0.01"}});
  const Result r = run(kBench + " --from-json " + a + "," + b + "," + c + " --auto-table " + table);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("has no line for 32x32x32:TN on GPU X"), std::string::npos) << r.output;
  EXPECT_EQ(contents(table), kTableHeader + "// From: " + file_name(a) + " " + file_name(b) + " " +
                                 file_name(c) + "\n" +
                                 "{\"GPU Y\", \"NN\", 64, 64, 64, \"dbuf\"},\n"
                                 "{\"GPU Y\", \"NT\", 128, 128, 128, \"tf32x3_fast\"},\n"
                                 "{\"GPU X\", \"NN\", 64, 64, 64, \"fast\"},\n");
}

// Bad flags and files: a message naming the flag or the file, exit 2.
TEST(GemmBench, AutoTableFromJsonRefusesBadFlagsAndFiles) {
  const std::string a = test_file("_a.json"), b = test_file("_b.json"), table = test_file(".inc");
  const std::string from = kBench + " --auto-table " + table + " --from-json " + a;
  write_results(a, "GPU X", {{64, 64, 64, "NN", "fast", "ok", "0.03"}});
  EXPECT_FAILS_WITH(from + " --reps 50", "times nothing: drop --reps");
  EXPECT_FAILS_WITH(kBench + " --from-json " + a, "give --auto-table FILE");
  EXPECT_FAILS_WITH(from + "," + test_file("_missing.json"),
                    "_missing.json': cannot read the file");
  std::ofstream(b) << "[1, 2";
  const Result r = run(from + "," + b);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("'" + b + "': not JSON"), std::string::npos) << r.output;
}

// Issue 37: values that were taken silently are errors, exit 2.
TEST(GemmBench, SilentValuesAreErrors) {
  const std::string out = test_file("_out");
  EXPECT_FAILS_WITH(kBench + " --variants cpu --shapes 8 --csv " + out + " --json " + out,
                    "--csv '" + out + "' and --json '" + out +
                        "' are the same file: each would overwrite the other");
  EXPECT_FAILS_WITH(kBench + " --variants cpu, --shapes 8",
                    "--variants 'cpu,': an empty item (a comma at an end, or two together)");
  EXPECT_FAILS_WITH(kBench + " --variants cpu --shapes 64,,64", "--shapes '64,,64': an empty item");
  EXPECT_FAILS_WITH(kBench + " --variants cpu,cpu --shapes 8",
                    "--variants names 'cpu' twice: name each variant once");
  EXPECT_FAILS_WITH(kBench + " --variants naive,vec,naive --shapes 8",
                    "--variants names 'naive' twice");
  EXPECT_FAILS_WITH(kBench + " --from-json ,a.json --auto-table x.inc",
                    "--from-json ',a.json': an empty item");
  const Result r = run(kBench + " --variants cpu --shapes 8 --skip-slow=1");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--skip-slow is a switch and takes no value, got '--skip-slow=1'"),
            std::string::npos)
      << r.output;
}

// A FIFO or a directory given to --from-json is refused at once (reading a FIFO would wait for a
// writer; `timeout` ends such a wait as exit status 124).
TEST(GemmBench, FromJsonRefusesAFifoAndADirectory) {
  const std::string fifo = test_file("_fifo.json"), table = test_file(".inc");
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Result r = run("timeout 20 " + kBench + " --auto-table " + table + " --from-json " + fifo);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("'" + fifo + "': is a FIFO (named pipe), not a gemm_bench --json file"),
            std::string::npos)
      << r.output;
  std::remove(fifo.c_str());
  const std::string dir = ::testing::TempDir();
  EXPECT_FAILS_WITH(kBench + " --auto-table " + table + " --from-json " + dir,
                    "is a directory, not a gemm_bench --json file");
}

// A bad result: the file, the result's index and what is wrong with it.
TEST(GemmBench, AutoTableFromJsonNamesTheBadResult) {
  const std::string b = test_file(".json");
  const std::string from = kBench + " --auto-table " + test_file(".inc") + " --from-json " + b;
  write_results(b, "GPU X", {{64, 64, 64, "NN", "warp9", "ok", "0.03"}});
  EXPECT_FAILS_WITH(from, "result 0: gemm: unknown variant 'warp9'");
  write_results(b, "GPU X", {{64, 64, 64, "NN", "fast", "great", "0.03"}});
  EXPECT_FAILS_WITH(from, "result 0: unknown status 'great'");
  write_results(b, "GPU X", {{64, 64, 0, "NN", "fast", "ok", "0.03"}});
  EXPECT_FAILS_WITH(from, "result 0: bad --shapes entry '64x64x0:NN'");
  write_results(b, "GPU X", {{64, 64, 64, "NN", "fast", "ok", "\"fast\""}});
  EXPECT_FAILS_WITH(from, "result 0: field 'ms_median' is \"fast\", not of the type");
  std::ofstream(b) << "{\"device\": {\"name\": \"GPU X\"}, \"results\": [{\"m\": 64}]}";
  EXPECT_FAILS_WITH(from, "result 0 has no field 'n'");
}

// The shipped table (kernels/auto_table.inc) is what gemm_bench makes of the runs its "// From:"
// line names, committed in docs/results/ (after a GPU run, commit them with the table).
TEST(GemmBench, ShippedAutoTableIsWhatTheCommittedRunsMake) {
  const std::string source = GEMM_MLP_SOURCE_DIR;
  const std::string shipped = contents(source + "/kernels/auto_table.inc");
  const std::string from_line = "\n// From: ";
  const size_t from = shipped.find(from_line);
  ASSERT_NE(from, std::string::npos)
      << "kernels/auto_table.inc names no runs: write it with gemm_bench --from-json";
  std::stringstream names(shipped.substr(from + from_line.size(),
                                         shipped.find('\n', from + 1) - from - from_line.size()));
  std::string runs;
  for (std::string name; names >> name;)
    runs += (runs.empty() ? "" : ",") + source + "/docs/results/" + name;
  const std::string table = test_file(".inc");
  const Result r = run(kBench + " --from-json " + runs + " --auto-table " + table);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(contents(table), shipped)
      << "kernels/auto_table.inc differs from what gemm_bench --from-json " << runs << " writes";
}

// A live run's --auto-table needs a kernel that can be in it; refused before any GPU is needed.
TEST(GemmBench, AutoTableNeedsAnFp32KernelOfThisProject) {
  EXPECT_FAILS_WITH(
      kBench + " --variants tf32,cublas,auto --shapes 64 --auto-table " + test_file(".inc"),
      "--variants names none (cuBLAS, TF32 kernels and auto are not candidates)");
}

}  // namespace
