// The apps as a user runs them: predict on an image with a saved model, and the errors of bad
// flags and files, each a message and a non-zero exit. The binaries' paths come from CMake.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

#include "engine/engine.h"
#include "models/mlp.h"
#include "run_app.h"

namespace {

using app_test::Result;
using app_test::run;

const std::string kPredict = PREDICT_BINARY;
const std::string kTrain = TRAIN_MLP_BINARY;
const std::string kTmp = ::testing::TempDir();

// ctest runs each test as its own process, in parallel: files are named after the test.
std::string test_file(const std::string& suffix) {
  return kTmp + "apps_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + suffix;
}

// An untrained 784-16-10 model saved as train_mlp saves it (layer sizes in the metadata).
std::string save_model() {
  const std::string path = test_file(".safetensors");
  engine::Context ctx(engine::Device::CPU, "cpu", 3);
  models::MLP mlp(ctx, 784, {16}, 10);
  engine::save_checkpoint(ctx, path, mlp.parameters(), {{"layers", mlp.layer_sizes()}});
  return path;
}

// A 50×40 dark-on-light picture with a bar in it.
std::string save_image() {
  const std::string path = test_file(".png");
  std::vector<unsigned char> px(50 * 40, 230);
  for (int y = 8; y < 32; ++y)
    for (int x = 20; x < 26; ++x) px[y * 50 + x] = 20;
  stbi_write_png(path.c_str(), 50, 40, 1, px.data(), 50);
  return path;
}

TEST(Predict, PrintsTheTopClassesOfEachImage) {
  const std::string model = save_model(), image = save_image();
  const Result r =
      run(kPredict + " --device cpu --top 3 --model " + model + " " + image + " " + image);
  ASSERT_EQ(r.status, 0) << r.output;
  // Two lines, "<image>: c (p%), c (p%), c (p%)".
  size_t lines = 0, at = 0;
  while ((at = r.output.find(image + ":", at)) != std::string::npos) ++lines, ++at;
  EXPECT_EQ(lines, 2u) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '%'), 6) << r.output;
}

TEST(Predict, BadInputIsAnErrorNamingIt) {
  const std::string model = save_model(), image = save_image();
  EXPECT_FAILS_WITH(kPredict + " --model " + kTmp + "missing.safetensors " + image,
                    "missing.safetensors: cannot open");
  EXPECT_FAILS_WITH(kPredict + " --device cpu --model " + model + " " + kTmp + "missing.png",
                    "missing.png: cannot open");
  EXPECT_FAILS_WITH(kPredict + " --device cpu --model " + model + " " + model,
                    "cannot decode image");
  EXPECT_FAILS_WITH(kPredict + " --device tpu --model " + model + " " + image,
                    "--device must be auto, cpu or cuda");
  EXPECT_FAILS_WITH(kPredict + " --model " + kTmp + " " + image, "is a directory");
  EXPECT_FAILS_WITH(kPredict + " " + image, "--model is required");
}

TEST(TrainMlp, BadFlagsAreErrorsBeforeAnyWork) {
  EXPECT_FAILS_WITH(kTrain + " --save ''", "--save needs a file name");
  EXPECT_FAILS_WITH(kTrain + " --save /nonexistent-dir/m.safetensors",
                    "the folder /nonexistent-dir does not exist or is not writable");
  EXPECT_FAILS_WITH(kTrain + " --results /nonexistent-dir/r.csv", "/nonexistent-dir");
  EXPECT_FAILS_WITH(kTrain + " --schedule step", "--schedule must be cosine or constant");
  EXPECT_FAILS_WITH(kTrain + " --lr 0", "--lr must be > 0");
  EXPECT_FAILS_WITH(kTrain + " --lr nan", "--lr");
  EXPECT_FAILS_WITH(kTrain + " --lr inf", "--lr");
  EXPECT_FAILS_WITH(kTrain + " --lr -0.1", "--lr must be a finite number > 0");
  EXPECT_FAILS_WITH(kTrain + " --history /nonexistent-dir/h.csv", "--history /nonexistent-dir");
  EXPECT_FAILS_WITH(kTrain + " --resume " + kTmp + "missing.safetensors", "cannot open");
  EXPECT_FAILS_WITH(kTrain + " --eval " + kTmp, "is a directory");
  const std::string model = save_model();  // metadata without train_mlp's run settings
  EXPECT_FAILS_WITH(kTrain + " --eval " + model, "has no 'hidden'");
  EXPECT_FAILS_WITH(kTrain + " --seed -1",
                    "--seed must be an integer in 0 .. 18446744073709551615");
  EXPECT_FAILS_WITH(kTrain + " --seed 18446744073709551616", "--seed must be an integer");
  EXPECT_FAILS_WITH(kTrain + " --hidden 64,0", "--hidden sizes must be >= 1, got 0");
  EXPECT_FAILS_WITH(kTrain + " --train-limit -5", "--train-limit must be >= 0");
}

// An IDX file of unsigned bytes: dims, then every value = i % 256.
void write_idx(const std::string& path, const std::vector<uint32_t>& dims) {
  std::ofstream f(path, std::ios::binary);
  const char magic[4] = {0, 0, 8, static_cast<char>(dims.size())};
  f.write(magic, 4);
  size_t count = 1;
  for (uint32_t d : dims) {
    const char be[4] = {static_cast<char>(d >> 24), static_cast<char>(d >> 16),
                        static_cast<char>(d >> 8), static_cast<char>(d)};
    f.write(be, 4);
    count *= d;
  }
  for (size_t i = 0; i < count; ++i) f.put(static_cast<char>(i % (dims.size() == 1 ? 10 : 256)));
}

// A tiny dataset in a folder: 3 training images of 4×4, 2 test images of side `test_side`.
std::string write_tiny_dataset(int test_side) {
  const std::string dir = test_file("_tiny");
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  write_idx(dir + "/train-images-idx3-ubyte", {3, 4, 4});
  write_idx(dir + "/train-labels-idx1-ubyte", {3});
  write_idx(dir + "/t10k-images-idx3-ubyte", {2, uint32_t(test_side), uint32_t(test_side)});
  write_idx(dir + "/t10k-labels-idx1-ubyte", {2});
  return dir;
}

TEST(TrainMlp, DatasetChecksAndNotices) {
  const std::string common = " --device cpu --epochs 1 --hidden 4 --data-dir ";
  std::string dir = write_tiny_dataset(4);
  const Result r = run(kTrain + common + dir + " --batch 10");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("--batch 10 is larger than the 3 training examples; using 3"),
            std::string::npos)
      << r.output;
  ASSERT_EQ(std::system(("gzip -kf " + dir + "/t10k-labels-idx1-ubyte").c_str()), 0);
  const Result both = run(kTrain + common + dir);
  EXPECT_EQ(both.status, 0) << both.output;
  EXPECT_NE(both.output.find("t10k-labels-idx1-ubyte.gz exist; reading " + dir +
                             "/t10k-labels-idx1-ubyte"),
            std::string::npos)
      << both.output;
  dir = write_tiny_dataset(5);
  EXPECT_FAILS_WITH(kTrain + common + dir, "the training images are 4x4, the test images 5x5");
}

// A directory or a FIFO where a data file should be is named as such.
TEST(TrainMlp, DataFilesThatAreNotFilesAreNamed) {
  const std::string dir = test_file("_data");
  ASSERT_EQ(
      std::system(("rm -rf " + dir + " && mkdir -p " + dir + "/train-images-idx3-ubyte").c_str()),
      0);
  EXPECT_FAILS_WITH(kTrain + " --device cpu --data-dir " + dir,
                    "train-images-idx3-ubyte: is a directory, not an IDX file");
  ASSERT_EQ(std::system(("rmdir " + dir + "/train-images-idx3-ubyte && mkfifo " + dir +
                         "/train-images-idx3-ubyte")
                            .c_str()),
            0);
  EXPECT_FAILS_WITH(kTrain + " --device cpu --data-dir " + dir, "is a FIFO (named pipe)");
}

// The real MNIST files, when scripts/fetch_mnist.sh has put them in data/mnist (or
// GEMM_MLP_MNIST_DIR points elsewhere); a missing dataset skips, as in RealMnist.*.
std::string mnist_dir() {
  const char* env = std::getenv("GEMM_MLP_MNIST_DIR");
  return env != nullptr && *env != '\0' ? env : GEMM_MLP_SOURCE_DIR "/data/mnist";
}

#define MNIST_OR_SKIP()                                                  \
  if (!std::ifstream(mnist_dir() + "/t10k-labels-idx1-ubyte").good() &&  \
      !std::ifstream(mnist_dir() + "/t10k-labels-idx1-ubyte.gz").good()) \
  GTEST_SKIP() << "MNIST is not in " << mnist_dir() << " (run scripts/fetch_mnist.sh)"

// A rate far too high: training stops with status 3, naming the epoch, and any checkpoint left
// is from an earlier, finite epoch (it loads: loading checks every value).
TEST(TrainMlp, DivergenceStopsWithStatus3AndNoBadCheckpoint) {
  MNIST_OR_SKIP();
  const std::string ckpt = test_file(".safetensors");
  std::remove(ckpt.c_str());
  const Result r = run(kTrain + " --device cpu --data-dir " + mnist_dir() +
                       " --train-limit 1024 --hidden 32 --epochs 3 --lr 1e6 --save " + ckpt);
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_NE(r.output.find("training diverged: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("non-finite in epoch"), std::string::npos) << r.output;
  if (std::ifstream(ckpt).good()) {
    const Result eval = run(kTrain + " --device cpu --data-dir " + mnist_dir() + " --eval " + ckpt);
    EXPECT_EQ(eval.status, 0) << eval.output;
  }
}

// 2 epochs, then --resume for 1 more, equals 3 epochs straight (constant schedule), loss for loss;
// --eval of the result prints the last epoch's test accuracy.
TEST(TrainMlp, ResumeContinuesAndEvalReports) {
  MNIST_OR_SKIP();
  const std::string ckpt = test_file(".safetensors"), history = test_file(".csv");
  const std::string common = kTrain + " --device cpu --data-dir " + mnist_dir() +
                             " --train-limit 1024 --hidden 32 --schedule constant";
  const Result straight = run(common + " --epochs 3");
  ASSERT_EQ(straight.status, 0) << straight.output;
  ASSERT_EQ(run(common + " --epochs 2 --save " + ckpt).status, 0);
  const Result resumed =
      run(kTrain + " --device cpu --data-dir " + mnist_dir() + " --train-limit 1024 --resume " +
          ckpt + " --epochs 3 --history " + history);
  ASSERT_EQ(resumed.status, 0) << resumed.output;
  const auto epoch3 = [](const std::string& out) {
    const size_t at = out.find("epoch  3/3");
    return at == std::string::npos ? std::string("(none)")
                                   : out.substr(at, out.find(" epoch ", at + 12) - at);
  };
  EXPECT_EQ(epoch3(resumed.output), epoch3(straight.output));
  std::ifstream h(history);
  std::string header, row;
  std::getline(h, header);
  std::getline(h, row);
  EXPECT_EQ(header, "epoch,loss,train_acc,test_acc,lr,epoch_s,gemm_s");
  EXPECT_EQ(row.substr(0, 2), "3,") << row;
  const Result eval = run(kTrain + " --device cpu --data-dir " + mnist_dir() + " --eval " + ckpt);
  EXPECT_EQ(eval.status, 0) << eval.output;
  EXPECT_NE(eval.output.find("test accuracy"), std::string::npos) << eval.output;
}

}  // namespace
