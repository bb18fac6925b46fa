#include "data/mnist.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "test_files.h"

namespace {

using data::Split;
using data_test::Bytes;
using data_test::error_of;
using data_test::expect_mentions;
using data_test::idx_bytes;
using data_test::TempDir;

float expected_pixel(int v) { return (v / 255.0f - 0.1307f) / 0.3081f; }

// Three 2×2 images and their labels, written under the MNIST names for `prefix`.
void write_fake(const TempDir& dir, const std::string& prefix, bool gzip,
                const Bytes& labels = {3, 9, 0}) {
  const Bytes pixels = {0, 255, 128, 1, 2, 3, 4, 5, 10, 20, 30, 40};
  const std::string images = dir.file(prefix + "-images-idx3-ubyte");
  const std::string label_file = dir.file(prefix + "-labels-idx1-ubyte");
  const Bytes image_bytes = idx_bytes({3, 2, 2}, pixels);
  const Bytes label_bytes = idx_bytes({static_cast<uint32_t>(labels.size())}, labels);
  if (gzip) {
    data_test::write_gz(images + ".gz", image_bytes);
    data_test::write_gz(label_file + ".gz", label_bytes);
  } else {
    data_test::write_file(images, image_bytes);
    data_test::write_file(label_file, label_bytes);
  }
}

TEST(Mnist, LoadsAndNormalises) {
  TempDir dir;
  write_fake(dir, "train", false);
  const data::Dataset ds = data::load_mnist(dir.str(), Split::Train);
  EXPECT_EQ(ds.count, 3);
  EXPECT_EQ(ds.rows, 2);
  EXPECT_EQ(ds.cols, 2);
  EXPECT_EQ(ds.features(), 4);
  EXPECT_EQ(ds.classes, 10);
  EXPECT_EQ(ds.labels, (std::vector<int32_t>{3, 9, 0}));
  ASSERT_EQ(ds.images.size(), 12u);
  EXPECT_FLOAT_EQ(ds.images[0], expected_pixel(0));
  EXPECT_FLOAT_EQ(ds.images[1], expected_pixel(255));
  EXPECT_FLOAT_EQ(ds.images[2], expected_pixel(128));
  EXPECT_FLOAT_EQ(ds.images[11], expected_pixel(40));
  EXPECT_NEAR(ds.images[0], -0.4242, 1e-4);  // the usual MNIST value of a black pixel
  EXPECT_NEAR(ds.images[1], 2.8215, 1e-4);   // and of a white one
  EXPECT_FLOAT_EQ(data::normalise_pixel(128), expected_pixel(128));
}

TEST(Mnist, LoadsGzippedTestSplit) {
  TempDir dir;
  write_fake(dir, "t10k", true);
  const data::Dataset ds = data::load_mnist(dir.str(), Split::Test);
  EXPECT_EQ(ds.count, 3);
  EXPECT_EQ(ds.labels, (std::vector<int32_t>{3, 9, 0}));
  EXPECT_FLOAT_EQ(ds.images[5], expected_pixel(3));
  // Only the test split exists here.
  expect_mentions(error_of([&] { data::load_mnist(dir.str(), Split::Train); }),
                  {"train-images-idx3-ubyte", "not found", "scripts/setup/fetch_mnist.sh"});
}

// A folder that cannot be looked up (a loop of symbolic links) is named with the system's reason,
// not called missing with a hint to download it.
TEST(Mnist, ASymbolicLinkLoopIsNamedNotCalledMissing) {
  TempDir dir;
  const std::string loop = dir.file("loop");
  ASSERT_EQ(::symlink(loop.c_str(), loop.c_str()), 0);
  const std::string error = error_of([&] { data::load_mnist(loop, Split::Test); });
  expect_mentions(error, {loop + "/t10k-images-idx3-ubyte: cannot be read: Too many levels of "
                                 "symbolic links"});
  EXPECT_EQ(error.find("not found"), std::string::npos) << error;
}

TEST(Mnist, MissingDirectoryNamesPathAndScript) {
  TempDir dir;
  const std::string missing = dir.file("nowhere");
  expect_mentions(error_of([&] { data::load_mnist(missing, Split::Test); }),
                  {missing + "/t10k-images-idx3-ubyte", ".gz", "scripts/setup/fetch_mnist.sh"});
}

// The hint of a missing file is the command that fetches the dataset asked for, into that folder.
TEST(Mnist, MissingFashionNamesTheCommandThatFetchesFashion) {
  TempDir dir;
  const std::string missing = dir.file("fashion here");
  const std::string fashion = error_of([&] { data::load_mnist(missing, Split::Test, "fashion"); });
  expect_mentions(fashion, {"to download Fashion-MNIST there, run: ",
                            "fetch_mnist.sh fashion '" + missing + "'"});
  const std::string mnist = error_of([&] { data::load_mnist(missing, Split::Test, "mnist"); });
  expect_mentions(mnist, {"to download MNIST there, run: ", "fetch_mnist.sh '" + missing + "'"});
  EXPECT_EQ(mnist.find("fashion '"), std::string::npos) << mnist;
  // The command's script is a file that exists (the source tree's, or an installed copy).
  const std::string command = data::fetch_command("fashion", missing);
  const std::string script = command.substr(0, command.find(' '));
  EXPECT_TRUE(std::filesystem::is_regular_file(script) ||
              std::filesystem::is_regular_file(std::string(GEMM_MLP_SOURCE_DIR) + "/" + script))
      << command;
}

// MNIST's files in the folder that --dataset fashion reads, or Fashion-MNIST's read as MNIST: an
// error naming both, not one dataset trained on (or scored) under the other's name.
TEST(Mnist, OneDatasetsLabelsAskedForAsTheOtherAreRefused) {
  TempDir dir;
  const Bytes train_start = {5, 0, 4, 1, 9, 2, 1, 3, 1, 4, 3, 5, 3, 6, 1, 7, 2, 8, 6, 9};
  const Bytes pixels(train_start.size(), 7);
  const uint32_t n = static_cast<uint32_t>(train_start.size());
  data_test::write_file(dir.file("train-images-idx3-ubyte"), idx_bytes({n, 1, 1}, pixels));
  data_test::write_file(dir.file("train-labels-idx1-ubyte"), idx_bytes({n}, train_start));
  expect_mentions(error_of([&] { data::load_mnist(dir.str(), Split::Train, "fashion"); }),
                  {"train-labels-idx1-ubyte", "these are MNIST's files, not Fashion-MNIST",
                   "(the labels begin 5 0 4 1 9 ..., as MNIST's do)", "--dataset mnist",
                   "fetch_mnist.sh fashion"});
  EXPECT_EQ(data::load_mnist(dir.str(), Split::Train, "mnist").count, 20);
  // Other labels (not MNIST's start) load as Fashion-MNIST.
  Bytes other = train_start;
  other[0] = 9;
  data_test::write_file(dir.file("train-labels-idx1-ubyte"), idx_bytes({n}, other));
  EXPECT_EQ(data::load_mnist(dir.str(), Split::Train, "fashion").count, 20);
  // Fashion-MNIST's test labels, read as MNIST (an MNIST checkpoint's --eval).
  const Bytes fashion_test = {9, 2, 1, 1, 6, 1, 4, 6, 5, 7, 4, 5, 7, 3, 4, 1, 2, 4, 8, 0};
  data_test::write_file(dir.file("t10k-images-idx3-ubyte"), idx_bytes({n, 1, 1}, pixels));
  data_test::write_file(dir.file("t10k-labels-idx1-ubyte"), idx_bytes({n}, fashion_test));
  expect_mentions(error_of([&] { data::load_mnist(dir.str(), Split::Test, "mnist"); }),
                  {"t10k-labels-idx1-ubyte: these are Fashion-MNIST's files, not MNIST",
                   "(the labels begin 9 2 1 1 6 ..., as Fashion-MNIST's do)", "--dataset fashion"});
  EXPECT_EQ(data::load_mnist(dir.str(), Split::Test, "fashion").count, 20);
}

TEST(Mnist, RejectsMismatchedCounts) {
  TempDir dir;
  write_fake(dir, "train", false, {1, 2});
  expect_mentions(error_of([&] { data::load_mnist(dir.str(), Split::Train); }),
                  {"train-images-idx3-ubyte", "3 images", "train-labels-idx1-ubyte", "2 labels"});
}

// Both headers are checked before any data is read: a short images file claiming 4 GiB is
// refused for its label count, not read.
TEST(Mnist, ChecksBothHeadersBeforeReadingData) {
  TempDir dir;
  data_test::write_gz(dir.file("train-images-idx3-ubyte.gz"),
                      idx_bytes({65536, 256, 256}, Bytes(100, 0)));
  data_test::write_file(dir.file("train-labels-idx1-ubyte"), idx_bytes({3}, {1, 2, 3}));
  expect_mentions(error_of([&] { data::load_mnist(dir.str(), Split::Train); }),
                  {"train-images-idx3-ubyte.gz has 65536 images", "3 labels"});
}

// Headers that agree but claim more than the host has: the error names the shape, the bytes
// and the limit, before anything is allocated.
TEST(Mnist, DatasetBeyondHostMemoryIsRefusedBeforeReading) {
  TempDir dir;
  data_test::write_file(dir.file("train-images-idx3-ubyte"),
                        idx_bytes({0x7FFFFFFFu, 4096, 4096}, Bytes(10, 0)));
  data_test::write_file(dir.file("train-labels-idx1-ubyte"), idx_bytes({0x7FFFFFFFu}, {1}));
  expect_mentions(
      error_of([&] { data::load_mnist(dir.str(), Split::Train); }),
      {"train-images-idx3-ubyte: shape 2147483647x4096x4096", "needs", "PiB", "more than the"});
}

// The probe's case: headers claiming 65536 images of 256×256 (20 GiB with their floats) on a
// small file, under a 1 GiB limit, are refused before reading.
TEST(Mnist, DatasetBeyondTheLimitIsRefusedWhateverTheFileSize) {
  TempDir dir;
  data_test::write_gz(dir.file("train-images-idx3-ubyte.gz"),
                      idx_bytes({65536, 256, 256}, Bytes(1000, 0)));
  data_test::write_file(dir.file("train-labels-idx1-ubyte"), idx_bytes({65536}, Bytes(10, 0)));
  ::setenv("GEMM_MLP_MEMORY_LIMIT", "1G", 1);
  const std::string error = error_of([&] { data::load_mnist(dir.str(), Split::Train); });
  ::unsetenv("GEMM_MLP_MEMORY_LIMIT");
  expect_mentions(error, {"train-images-idx3-ubyte.gz: shape 65536x256x256",
                          "needs 20.0 GiB (21475164160 bytes)", "more than the 1.0 GiB",
                          "GEMM_MLP_MEMORY_LIMIT"});
}

TEST(Mnist, RejectsLabelOutsideClasses) {
  TempDir dir;
  write_fake(dir, "train", false, {1, 10, 2});
  expect_mentions(error_of([&] { data::load_mnist(dir.str(), Split::Train); }),
                  {"train-labels-idx1-ubyte", "label 10 at index 1", "0..9"});
}

TEST(Mnist, RejectsWrongRank) {
  TempDir dir;
  data_test::write_file(dir.file("train-images-idx3-ubyte"), idx_bytes({3, 4}, Bytes(12, 0)));
  data_test::write_file(dir.file("train-labels-idx1-ubyte"), idx_bytes({3}, {1, 2, 3}));
  expect_mentions(error_of([&] { data::load_mnist(dir.str(), Split::Train); }),
                  {"train-images-idx3-ubyte", "expected 3 dimensions", "3x4"});
}

// The real files, when scripts/setup/fetch_mnist.sh has put them in data/mnist (or
// GEMM_MLP_MNIST_DIR points elsewhere). A missing dataset skips: that is about data, not about a
// GPU.
std::string real_mnist_dir() {
  const char* env = std::getenv("GEMM_MLP_MNIST_DIR");
  return env != nullptr && *env != '\0' ? env : GEMM_MLP_SOURCE_DIR "/data/mnist";
}

bool real_mnist_present(const std::string& dir) {
  for (const char* name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                           "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}) {
    const std::filesystem::path p = std::filesystem::path(dir) / name;
    if (!std::filesystem::exists(p) && !std::filesystem::exists(p.string() + ".gz")) return false;
  }
  return true;
}

void check_real_split(const data::Dataset& ds, int count, int first_label) {
  EXPECT_EQ(ds.count, count);
  EXPECT_EQ(ds.rows, 28);
  EXPECT_EQ(ds.cols, 28);
  ASSERT_EQ(ds.images.size(), static_cast<size_t>(count) * 784);
  ASSERT_EQ(ds.labels.size(), static_cast<size_t>(count));
  EXPECT_EQ(ds.labels[0], first_label);
  std::set<int> classes(ds.labels.begin(), ds.labels.end());
  EXPECT_EQ(classes.size(), 10u);
  float lo = ds.images[0], hi = ds.images[0];
  for (float v : ds.images) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_FLOAT_EQ(lo, data::normalise_pixel(0));
  EXPECT_FLOAT_EQ(hi, data::normalise_pixel(255));
}

TEST(RealMnist, LoadsBothSplits) {
  const std::string dir = real_mnist_dir();
  if (!real_mnist_present(dir))
    GTEST_SKIP() << "MNIST not found in " << dir
                 << " (data skip, not a GPU skip): run scripts/setup/fetch_mnist.sh or set "
                    "GEMM_MLP_MNIST_DIR";
  // The first training digit of MNIST is a 5, the first test digit a 7.
  check_real_split(data::load_mnist(dir, Split::Train), 60000, 5);
  check_real_split(data::load_mnist(dir, Split::Test), 10000, 7);
}

}  // namespace
