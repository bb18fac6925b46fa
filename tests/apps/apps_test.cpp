// The apps as a user runs them: predict on an image with a saved model, and the errors of bad
// flags and files, each a message and a non-zero exit. The binaries' paths come from CMake.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

#include "engine/engine.h"
#include "gpu_test.h"
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

// An untrained 784-4-10 (or inputs-4-10) model as PyTorch's save_file(model.state_dict()) saves
// it: no metadata, unless some is given.
std::string save_plain_model(int inputs = 784, const engine::Metadata& metadata = {}) {
  const std::string path = test_file("_plain.safetensors");
  engine::Context ctx(engine::Device::CPU, "cpu", 3);
  models::MLP mlp(ctx, inputs, {4}, 10);
  engine::save_checkpoint(ctx, path, mlp.parameters(), metadata);
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

// A PyTorch state_dict without metadata: the layer sizes from its tensors, MNIST's class names
// (with a note); a checkpoint naming Fashion-MNIST prints its class names, unless --dataset says
// otherwise.
TEST(Predict, TakesAPyTorchStateDictAndNamesTheDatasetsClasses) {
  const std::string image = save_image();
  const std::string predict = kPredict + " --device cpu --top 2 --model ";
  const Result plain = run(predict + save_plain_model() + " " + image);
  ASSERT_EQ(plain.status, 0) << plain.output;
  EXPECT_NE(plain.output.find("names no dataset; printing mnist's classes (--dataset to choose)"),
            std::string::npos)
      << plain.output;
  const std::vector<std::string> fashion_names = {"T-shirt/top", "Trouser",   "Pullover", "Dress",
                                                  "Coat",        "Sandal",    "Shirt",    "Sneaker",
                                                  "Bag",         "Ankle boot"};
  const auto fashion_names_in = [&](const std::string& out) {
    int found = 0;
    for (const std::string& name : fashion_names)
      found += out.find(" " + name + " (") != std::string::npos;
    return found;
  };
  const std::string fashion = save_plain_model(784, {{"dataset", "fashion"}});
  const Result named = run(predict + fashion + " " + image);
  ASSERT_EQ(named.status, 0) << named.output;
  EXPECT_EQ(fashion_names_in(named.output), 2) << named.output;
  const Result told = run(predict + fashion + " --dataset mnist " + image);
  ASSERT_EQ(told.status, 0) << told.output;
  EXPECT_EQ(fashion_names_in(told.output), 0) << told.output;
  EXPECT_FAILS_WITH(predict + fashion + " --dataset cifar " + image,
                    "--dataset must be mnist or fashion, got 'cifar'");
  EXPECT_FAILS_WITH(predict + fashion + " --dataset '' " + image,
                    "--dataset must be mnist or fashion, got ''");
  // Metadata claiming layers that the 51 KB file does not hold: refused from the header.
  EXPECT_FAILS_WITH(predict + save_plain_model(784, {{"hidden", "100000,100000"}}) + " " + image,
                    "metadata 'hidden' is '100000,100000', but the tensors give hidden '4' "
                    "(784-4-10)");
  EXPECT_FAILS_WITH(predict + save_plain_model(784, {{"dataset", "cifar"}}) + " " + image,
                    "metadata 'dataset' is 'cifar', not mnist or fashion");
  EXPECT_FAILS_WITH(kPredict + " --top 0x10 --model " + save_plain_model(784) + " " + image,
                    "--top must be an integer >= 1, got '0x10'");
}

// A blank image is classified with a warning; an unreadable one is reported, the others still
// classified, and the exit status is 1.
TEST(Predict, WarnsOnABlankImageAndGoesOnPastAnUnreadableOne) {
  const std::string model = save_model(), image = save_image(), blank = test_file("_blank.png");
  const std::vector<unsigned char> gray(30 * 30, 128);
  stbi_write_png(blank.c_str(), 30, 30, 1, gray.data(), 30);
  const std::string missing = kTmp + "missing.png";
  const Result r =
      run(kPredict + " --device cpu --model " + model + " " + blank + " " + missing + " " + image);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("warning: " + blank + " is blank (its pixels span 0 of 255 gray levels)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("warning: " + image), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(missing + ": cannot open"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(blank + ": "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(image + ": "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 of 3 images could not be read"), std::string::npos) << r.output;
}

TEST(TrainMlp, BadFlagsAreErrorsBeforeAnyWork) {
  EXPECT_FAILS_WITH(kTrain + " --save ''", "--save needs a file name");
  EXPECT_FAILS_WITH(kTrain + " --save /nonexistent-dir/m.safetensors",
                    "the folder /nonexistent-dir does not exist or is not writable");
  EXPECT_FAILS_WITH(kTrain + " --results /nonexistent-dir/r.csv", "/nonexistent-dir");
  EXPECT_FAILS_WITH(kTrain + " --schedule step", "--schedule must be cosine or constant");
  EXPECT_FAILS_WITH(kTrain + " --lr 0", "--lr must be a finite decimal number > 0, got '0'");
  EXPECT_FAILS_WITH(kTrain + " --lr nan", "--lr");
  EXPECT_FAILS_WITH(kTrain + " --lr inf", "--lr");
  EXPECT_FAILS_WITH(kTrain + " --lr -0.1", "--lr must be a finite decimal number > 0");
  EXPECT_FAILS_WITH(kTrain + " --history /nonexistent-dir/h.csv", "--history /nonexistent-dir");
  EXPECT_FAILS_WITH(kTrain + " --resume " + kTmp + "missing.safetensors", "cannot open");
  EXPECT_FAILS_WITH(kTrain + " --eval " + kTmp, "is a directory");
  const std::string model = save_model();  // metadata without train_mlp's run settings
  EXPECT_FAILS_WITH(kTrain + " --resume " + model, "its metadata has no '");
  EXPECT_FAILS_WITH(kTrain + " --seed -1",
                    "--seed must be an integer in 0 .. 18446744073709551615");
  EXPECT_FAILS_WITH(kTrain + " --seed 18446744073709551616", "--seed must be an integer");
  EXPECT_FAILS_WITH(kTrain + " --hidden 64,0", "--hidden must be layer sizes >= 1");
  EXPECT_FAILS_WITH(kTrain + " --train-limit -5", "--train-limit must be an integer >= 0");
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

// A tiny dataset in a folder: `train` training images of 4×4, 2 test images of side `test_side`.
std::string write_tiny_dataset(int test_side, uint32_t train = 3) {
  const std::string dir = test_file("_tiny");
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  write_idx(dir + "/train-images-idx3-ubyte", {train, 4, 4});
  write_idx(dir + "/train-labels-idx1-ubyte", {train});
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

// Numbers are decimal, whole and in range; an empty value, a repeated flag or an empty name is an
// error, never a silent 0, default or "all".
TEST(TrainMlp, FlagValuesAreStrict) {
  const std::string t = kTrain + " --device cpu";
  EXPECT_FAILS_WITH(t + " --momentum 1", "--momentum must be a decimal number in [0, 1), got '1'");
  EXPECT_FAILS_WITH(t + " --momentum -0.5", "--momentum must be a decimal number in [0, 1)");
  EXPECT_FAILS_WITH(t + " --momentum 0x10",
                    "--momentum must be a decimal number in [0, 1), got '0x10'");
  EXPECT_FAILS_WITH(t + " --momentum ''", "--momentum must be a decimal number in [0, 1), got ''");
  EXPECT_FAILS_WITH(t + " --weight-decay ''",
                    "--weight-decay must be a finite decimal number >= 0, got ''");
  EXPECT_FAILS_WITH(t + " --log-interval ''", "--log-interval must be an integer >= 0, got ''");
  EXPECT_FAILS_WITH(t + " --train-limit ''", "--train-limit must be an integer >= 0, got ''");
  EXPECT_FAILS_WITH(t + " --epochs 0x10", "--epochs must be an integer >= 1, got '0x10'");
  EXPECT_FAILS_WITH(t + " --batch 99999999999",
                    "--batch must be an integer in 1 .. 2147483647, got '99999999999'");
  EXPECT_FAILS_WITH(t + " --lr 1e99", "--lr must be a finite decimal number > 0, got '1e99'");
  EXPECT_FAILS_WITH(t + " --hidden 16,,16",
                    "--hidden must be layer sizes >= 1, comma-separated (e.g. 1024,1024), got "
                    "'16,,16'");
  EXPECT_FAILS_WITH(t + " --hidden 16 --hidden 32", "--hidden: At Most 1 required but received 2");
  EXPECT_FAILS_WITH(t + " --gemm ''", "--gemm needs a value, got ''");
  EXPECT_FAILS_WITH(t + " --data-dir ''", "--data-dir needs a value, got ''");
  EXPECT_FAILS_WITH(t + " --eval ''", "--eval needs a value, got ''");
}

// Layer sizes from the flags that no machine holds are refused before allocating, naming the
// sizes and the limit (not a bare std::bad_alloc).
TEST(TrainMlp, HugeLayersAreRefusedBeforeAllocating) {
  const std::string dir = write_tiny_dataset(4);
  EXPECT_FAILS_WITH(kTrain + " --device cpu --hidden 1000000000,1000000000 --data-dir " + dir,
                    "--hidden 1000000000,1000000000: the model 16-1000000000-1000000000-10 has "
                    "1e+18 parameters; with their gradients, optimiser state and a batch's "
                    "activations, it needs ");
}

// Under an address-space limit (ulimit -v), a model that the machine's memory would hold but the
// limit does not is refused before any work, naming the limit (not a std::bad_alloc after the
// first gigabytes). 16-20000000-10 has 540M parameters: about 11 GB with their copies.
TEST(TrainMlp, LayersBeyondTheAddressSpaceLimitAreRefusedBeforeAllocating) {
  const std::string dir = write_tiny_dataset(4);
  const Result r = run("sh -c 'ulimit -v 4194304 && exec " + kTrain +
                       " --device cpu --epochs 1 --hidden 20000000 --data-dir " + dir + "'");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("--hidden 20000000: the model 16-20000000-10 has 5.4e+08 parameters"),
            std::string::npos)
      << r.output;
  // The address-space limit, unless the machine has less memory available than it.
  EXPECT_TRUE(r.output.find("address space left under this process's limit (ulimit -v, "
                            "RLIMIT_AS: 4.0 GiB") != std::string::npos ||
              r.output.find("host memory available") != std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("bad_alloc"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("epoch  1/1"), std::string::npos) << r.output;
}

// --eval of a PyTorch state_dict without metadata: the layer sizes from the tensors, checked
// against --hidden and the data before anything is built; metadata that contradicts the tensors
// (a small file claiming 100000-wide layers) is refused from the header.
TEST(TrainMlp, EvalTakesAPyTorchStateDictWithoutMetadata) {
  const std::string dir = write_tiny_dataset(4);  // 4×4 images: 16 inputs
  const std::string eval = kTrain + " --device cpu --data-dir " + dir + " --eval ";
  const std::string model = save_plain_model(16);
  const Result r = run(eval + model);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("names no dataset; evaluating on mnist (--dataset to choose)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(model + " (16-4-10) on mnist (" + dir + "): test loss"),
            std::string::npos)
      << r.output;
  EXPECT_FAILS_WITH(eval + model + " --hidden 5",
                    "the checkpoint's tensors are 16-4-10, which --hidden contradicts");
  EXPECT_FAILS_WITH(eval + save_plain_model(784),
                    "the model 784-4-10 takes 784 inputs, but the test images in " + dir +
                        " have 16 pixels (4x4)");
  EXPECT_FAILS_WITH(eval + save_plain_model(16, {{"hidden", "100000,100000"}}),
                    "metadata 'hidden' is '100000,100000', but the tensors give hidden '4'");
}

// A bad value in a checkpoint's metadata is named by the checkpoint and the key, never by a flag
// the user did not give.
TEST(TrainMlp, BadMetadataNamesTheCheckpointAndTheKey) {
  const std::string dir = write_tiny_dataset(4);
  const auto eval_with = [&](const engine::Metadata& m) {
    return kTrain + " --device cpu --data-dir " + dir + " --eval " + save_plain_model(16, m);
  };
  const std::string where = "_plain.safetensors: metadata ";
  EXPECT_FAILS_WITH(eval_with({{"seed", "-1"}}),
                    where + "'seed' must be an integer in 0 .. 18446744073709551615, got '-1'");
  EXPECT_FAILS_WITH(eval_with({{"batch", "0x10"}}),
                    where + "'batch' must be an integer >= 1, got '0x10'");
  EXPECT_FAILS_WITH(eval_with({{"lr", "0"}}),
                    where + "'lr' must be a finite decimal number > 0, got '0'");
  EXPECT_FAILS_WITH(eval_with({{"momentum", "1.5"}}),
                    where + "'momentum' must be a decimal number in [0, 1), got '1.5'");
  EXPECT_FAILS_WITH(eval_with({{"epochs", ""}}),
                    where + "'epochs' must be an integer >= 1, got ''");
  EXPECT_FAILS_WITH(eval_with({{"optimizer", "lion"}}),
                    where + "'optimizer' must be sgd or adam, got 'lion'");
  EXPECT_FAILS_WITH(eval_with({{"dataset", "cifar"}}),
                    where + "'dataset' is 'cifar', not mnist or fashion");
  EXPECT_FAILS_WITH(eval_with({{"normalisation", "v/255"}}),
                    where +
                        "'normalisation' is 'v/255', but inputs here are (v/255 - 0.1307) / "
                        "0.3081");
  const Result lr = run(eval_with({{"lr", "nan"}}));
  EXPECT_EQ(lr.output.find("--lr must"), std::string::npos) << lr.output;
}

// --eval scores on the dataset the checkpoint names (its folder unless --data-dir), unless
// --dataset says otherwise.
TEST(TrainMlp, EvalScoresOnTheCheckpointsDataset) {
  const std::string dir = write_tiny_dataset(4);
  const std::string model = save_plain_model(16, {{"dataset", "fashion"}});
  EXPECT_FAILS_WITH(kTrain + " --device cpu --eval " + model, "data/fashion-mnist");
  const Result r = run(kTrain + " --device cpu --data-dir " + dir + " --eval " + model);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("(16-4-10) on fashion (" + dir + "): test loss"), std::string::npos)
      << r.output;
  const Result told =
      run(kTrain + " --device cpu --data-dir " + dir + " --dataset mnist --eval " + model);
  ASSERT_EQ(told.status, 0) << told.output;
  EXPECT_NE(told.output.find("(16-4-10) on mnist (" + dir + "): test loss"), std::string::npos)
      << told.output;
}

// --eval scores on the GEMM variant --gemm names (checked against the device, as training's is).
TEST(TrainMlp, EvalTakesGemm) {
  const std::string dir = write_tiny_dataset(4);
  const std::string eval =
      kTrain + " --device cpu --data-dir " + dir + " --eval " + save_plain_model(16);
  const Result r = run(eval + " --gemm cpu");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("test accuracy"), std::string::npos) << r.output;
  EXPECT_FAILS_WITH(eval + " --gemm vec", "--gemm vec runs on the GPU, but training runs on");
}

// A folder with 20 images of 4×4 per split whose labels are `train` and `test`.
std::string write_labelled_dataset(const std::vector<uint8_t>& train,
                                   const std::vector<uint8_t>& test) {
  const std::string dir = test_file("_labelled");
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  for (const auto& [prefix, labels] : {std::pair{"train", train}, {"t10k", test}}) {
    write_idx(dir + "/" + prefix + "-images-idx3-ubyte", {uint32_t(labels.size()), 4, 4});
    std::ofstream f(dir + "/" + prefix + "-labels-idx1-ubyte", std::ios::binary);
    const char header[8] = {0, 0, 8, 1, 0, 0, 0, static_cast<char>(labels.size())};
    f.write(header, 8);
    f.write(reinterpret_cast<const char*>(labels.data()), std::streamsize(labels.size()));
  }
  return dir;
}

// Fashion-MNIST's files read as MNIST (an MNIST checkpoint's --eval, or training without
// --dataset fashion) are refused, naming both datasets; --dataset fashion reads them.
TEST(TrainMlp, FashionFilesAreNotTakenForMnist) {
  const std::string dir =
      write_labelled_dataset({9, 0, 0, 3, 0, 2, 7, 2, 5, 5, 0, 9, 5, 5, 7, 9, 1, 0, 6, 4},
                             {9, 2, 1, 1, 6, 1, 4, 6, 5, 7, 4, 5, 7, 3, 4, 1, 2, 4, 8, 0});
  const std::string eval = kTrain + " --device cpu --data-dir " + dir + " --eval " +
                           save_plain_model(16, {{"dataset", "mnist"}});
  const Result r = run(eval);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("t10k-labels-idx1-ubyte: these are Fashion-MNIST's files, not MNIST"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("test accuracy"), std::string::npos) << r.output;
  const Result told = run(eval + " --dataset fashion");
  EXPECT_EQ(told.status, 0) << told.output;
  const std::string train =
      kTrain + " --device cpu --hidden 8 --batch 4 --epochs 1 --data-dir " + dir;
  EXPECT_FAILS_WITH(train, "train-labels-idx1-ubyte: these are Fashion-MNIST's files, not MNIST");
  const Result fashion = run(train + " --dataset fashion");
  EXPECT_EQ(fashion.status, 0) << fashion.output;
}

// --eval on a test set other than the one the run was scored on says so (a checkpoint records its
// test set's fingerprint); on the same one, it says nothing.
TEST(TrainMlp, EvalOnOtherTestDataSaysSo) {
  const std::string dir = write_tiny_dataset(4, 8), ckpt = test_file(".safetensors");
  const std::string train = kTrain + " --device cpu --hidden 8 --batch 4 --epochs 1 --data-dir ";
  ASSERT_EQ(run(train + dir + " --save " + ckpt).status, 0);
  const std::string eval = kTrain + " --device cpu --data-dir " + dir + " --eval " + ckpt;
  const Result same = run(eval);
  EXPECT_EQ(same.status, 0) << same.output;
  EXPECT_EQ(same.output.find("note:"), std::string::npos) << same.output;
  {  // one test pixel changed
    std::fstream f(dir + "/t10k-images-idx3-ubyte",
                   std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(16 + 3);
    f.put(static_cast<char>(200));
  }
  const Result other = run(eval);
  EXPECT_EQ(other.status, 0) << other.output;
  EXPECT_NE(other.output.find("note: " + ckpt + " was tested on data of fingerprint fnv1a64:"),
            std::string::npos)
      << other.output;
  EXPECT_NE(other.output.find("but the test set in " + dir + " has fingerprint fnv1a64:"),
            std::string::npos)
      << other.output;
  EXPECT_NE(other.output.find(": these scores are on other data"), std::string::npos)
      << other.output;
}

// The checkpoint records how inputs are normalised, for PyTorch users.
TEST(TrainMlp, SaveRecordsTheInputNormalisation) {
  const std::string dir = write_tiny_dataset(4), ckpt = test_file(".safetensors");
  const Result r =
      run(kTrain + " --device cpu --epochs 1 --hidden 4 --data-dir " + dir + " --save " + ckpt);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(engine::read_checkpoint_metadata(ckpt).at("normalisation"),
            "(v/255 - 0.1307) / 0.3081");
  std::remove(ckpt.c_str());
  std::remove(engine::optimizer_state_path(ckpt).c_str());
}

// A loss that explodes but stays finite ends with a warning (exit 0: the run finished); a
// working run gets none.
TEST(TrainMlp, ExplodingButFiniteLossWarns) {
  const std::string dir = write_tiny_dataset(4);
  const std::string t = kTrain + " --device cpu --epochs 3 --hidden 4 --data-dir " + dir;
  const Result r = run(t + " --optimizer adam --lr 1e3");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("warning: [cpu] the last epoch's training loss"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("training blew up (try a smaller --lr)"), std::string::npos) << r.output;
  const Result calm = run(t);
  EXPECT_EQ(calm.status, 0) << calm.output;
  EXPECT_EQ(calm.output.find("warning"), std::string::npos) << calm.output;
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

// The real MNIST files, when scripts/setup/fetch_mnist.sh has put them in data/mnist (or
// GEMM_MLP_MNIST_DIR points elsewhere); a missing dataset skips, as in RealMnist.*.
std::string mnist_dir() {
  const char* env = std::getenv("GEMM_MLP_MNIST_DIR");
  return env != nullptr && *env != '\0' ? env : GEMM_MLP_SOURCE_DIR "/data/mnist";
}

#define MNIST_OR_SKIP()                                                  \
  if (!std::ifstream(mnist_dir() + "/t10k-labels-idx1-ubyte").good() &&  \
      !std::ifstream(mnist_dir() + "/t10k-labels-idx1-ubyte.gz").good()) \
  GTEST_SKIP() << "MNIST is not in " << mnist_dir() << " (run scripts/setup/fetch_mnist.sh)"

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
  std::remove(history.c_str());
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
  EXPECT_EQ(header, "epoch,loss,train_acc,test_acc,lr,epoch_s,gemm_s,run_id");
  EXPECT_EQ(row.substr(0, 2), "3,") << row;
  const Result eval = run(kTrain + " --device cpu --data-dir " + mnist_dir() + " --eval " + ckpt);
  EXPECT_EQ(eval.status, 0) << eval.output;
  EXPECT_NE(eval.output.find("test accuracy"), std::string::npos) << eval.output;
}

// ---- Checkpoints and resuming, on a tiny dataset on the CPU (no MNIST needed) ----

std::string file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(f, line);) lines.push_back(line);
  return lines;
}

// Files in the folder of `path` whose name starts with its name and ".tmp".
int temporaries_of(const std::string& path) {
  const Result r = run("ls -d '" + path + "'.tmp* '" + engine::optimizer_state_path(path) +
                       "'.tmp* 2>/dev/null | wc -l");
  return std::stoi(r.output);
}

// train_mlp on a small model, on the CPU, over the data in `dir`.
std::string tiny_train(const std::string& dir) {
  return kTrain + " --device cpu --hidden 8 --batch 4 --data-dir " + dir;
}

// A train_mlp running on its own, its stdout and stderr in one pipe that the test reads.
struct Child {
  pid_t pid;
  int out;
};

Child spawn(const std::string& command, int pipe_size = 0) {
  int fds[2];
  if (::pipe(fds) != 0) return {-1, -1};
  if (pipe_size > 0) ::fcntl(fds[0], F_SETPIPE_SZ, pipe_size);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  return {pid, fds[0]};
}

// Reads the child's output to the end and waits for it.
Result finish(const Child& c) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(c.out, buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<size_t>(n));
  ::close(c.out);
  int status = 0;
  ::waitpid(c.pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Waits until the child, which the test does not read yet, blocks on its full output pipe: its
// output stops growing while it still runs. False if it never does (within a minute).
bool wait_until_blocked(const Child& c) {
  int pending = -1, unchanged = 0;
  for (int i = 0; i < 30000 && unchanged < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    int now = 0;
    if (::ioctl(c.out, FIONREAD, &now) != 0 || ::waitpid(c.pid, nullptr, WNOHANG) != 0)
      return false;
    unchanged = now > 0 && now == pending ? unchanged + 1 : 0;
    pending = now;
  }
  return unchanged >= 100;
}

// Every tensor of a checkpoint, for a bit-for-bit comparison.
std::vector<engine::safetensors::Entry> tensors_of(const std::string& path) {
  return engine::safetensors::read(path).tensors;
}

bool same_tensors(const std::string& a, const std::string& b) {
  const auto ta = tensors_of(a), tb = tensors_of(b);
  if (ta.size() != tb.size()) return false;
  for (size_t i = 0; i < ta.size(); ++i)
    if (ta[i].name != tb[i].name || ta[i].shape != tb[i].shape || ta[i].values != tb[i].values)
      return false;
  return true;
}

// --resume keeps writing its checkpoint, and --history keeps the earlier epochs' rows; resuming a
// finished run trains nothing and writes nothing; a shorter --epochs, or another run's history,
// is an error before any work.
TEST(TrainMlp, ResumeKeepsSavingAndKeepsOneHistory) {
  const std::string dir = write_tiny_dataset(4, 24);
  const std::string ckpt = test_file(".safetensors"), history = test_file("_history.csv");
  std::remove(history.c_str());
  const std::string resume = kTrain + " --device cpu --data-dir " + dir + " --resume " + ckpt;
  Result r = run(tiny_train(dir) + " --epochs 2 --save " + ckpt + " --history " + history);
  ASSERT_EQ(r.status, 0) << r.output;
  r = run(resume + " --epochs 4 --history " + history);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("resumed from " + engine::optimizer_state_path(ckpt) + " (save "),
            std::string::npos)
      << r.output;
  const engine::Metadata m = engine::read_checkpoint_metadata(ckpt);
  EXPECT_EQ(m.at("epoch"), "4");  // saved by the resumed run
  EXPECT_EQ(m.at("epochs"), "4");
  const std::vector<std::string> rows = lines_of(history);
  ASSERT_EQ(rows.size(), 5u) << file_bytes(history);
  EXPECT_EQ(rows[0], "epoch,loss,train_acc,test_acc,lr,epoch_s,gemm_s,run_id");
  for (int e = 1; e <= 4; ++e) {
    EXPECT_EQ(rows[e].substr(0, 2), std::to_string(e) + ",") << rows[e];
    EXPECT_EQ(rows[e].substr(rows[e].rfind(',') + 1), m.at("run_id")) << rows[e];
  }

  const std::string model = file_bytes(ckpt),
                    state = file_bytes(engine::optimizer_state_path(ckpt));
  for (const std::string& again : {resume, resume + " --epochs 4"}) {
    r = run(again + " --history " + history);
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(
        r.output.find("nothing to train: " + ckpt + " was saved after epoch 4, and --epochs is 4"),
        std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("nan"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("GEMM time"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("saved " + ckpt + " ("), std::string::npos) << r.output;
  }
  EXPECT_FAILS_WITH(resume + " --epochs 3", "--epochs 3 is below the 4 epochs");
  EXPECT_EQ(file_bytes(ckpt), model);
  EXPECT_EQ(file_bytes(engine::optimizer_state_path(ckpt)), state);
  EXPECT_EQ(lines_of(history).size(), 5u);

  const std::string other = test_file("_other.csv");
  ASSERT_EQ(run(tiny_train(dir) + " --epochs 1 --history " + other).status, 0);
  EXPECT_FAILS_WITH(resume + " --epochs 5 --history " + other, "its rows are from another run");
  EXPECT_EQ(file_bytes(ckpt), model);

  // A row the checkpoint does not hold (a run killed between writing its history and saving) is
  // dropped, saying so.
  std::ofstream(history, std::ios::app) << "5,9,0,0,0,0,0," << m.at("run_id") << "\n";
  r = run(resume + " --epochs 5 --history " + history);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("dropping the rows of epochs 5 to 5, which " + ckpt + " does not hold"),
            std::string::npos)
      << r.output;
  const std::vector<std::string> after = lines_of(history);
  ASSERT_EQ(after.size(), 6u);
  EXPECT_EQ(after[5].substr(0, 2), "5,");
  EXPECT_NE(after[5].substr(0, 4), "5,9,");
}

// Both files of a checkpoint name the run; --train-limit and the GEMM variant are recorded and
// adopted like the other settings.
TEST(TrainMlp, ResumeChecksTheRunAndAdoptsItsSettings) {
  const std::string dir = write_tiny_dataset(4, 24);
  const std::string a = test_file("_a.safetensors"), b = test_file("_b.safetensors");
  ASSERT_EQ(run(tiny_train(dir) + " --epochs 1 --train-limit 16 --save " + a).status, 0);
  const engine::Metadata m = engine::read_checkpoint_metadata(a);
  EXPECT_EQ(m.at("train_limit"), "16");
  EXPECT_EQ(m.at("variant"), "cpu");
  EXPECT_EQ(m.at("run_id"),
            engine::read_checkpoint_metadata(engine::optimizer_state_path(a)).at("run_id"));
  const std::string resume = kTrain + " --device cpu --data-dir " + dir + " --resume ";
  EXPECT_FAILS_WITH(resume + a + " --epochs 2 --train-limit 12",
                    "the checkpoint has train_limit 16, which --train-limit contradicts");
  EXPECT_FAILS_WITH(resume + a + " --epochs 2 --gemm naive",  // may differ: taken, then checked
                    "--gemm naive runs on the GPU, but training runs on the CPU");
  Result r = run(resume + a + " --epochs 2");  // 16 examples: 4 steps an epoch, as saved
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("16 training examples"), std::string::npos) << r.output;
  write_tiny_dataset(4, 12);  // the same folder, fewer examples than the run had
  EXPECT_FAILS_WITH(resume + a + " --epochs 3",
                    "the run trained on 16 examples an epoch; the data here (" + dir +
                        ", --train-limit 16) has 12");

  ASSERT_EQ(run(tiny_train(dir) + " --epochs 1 --seed 2 --train-limit 16 --save " + b).status, 0);
  ASSERT_EQ(
      std::rename(engine::optimizer_state_path(b).c_str(), engine::optimizer_state_path(a).c_str()),
      0);
  EXPECT_FAILS_WITH(resume + a + " --epochs 3", "are from different runs");
}

// --branched-no-graph changes --no-graph and needs the branches: alone or with --serial-step it
// is an error before any work; --no-dependent-launch is taken on the CPU (which has none).
TEST(TrainMlp, StepModeFlagsAreChecked) {
  const std::string dir = write_tiny_dataset(4, 8);
  const std::string train = tiny_train(dir) + " --epochs 1";
  EXPECT_FAILS_WITH(train + " --branched-no-graph",
                    "--branched-no-graph changes how --no-graph runs; give both");
  EXPECT_FAILS_WITH(train + " --no-graph --branched-no-graph --serial-step",
                    "--branched-no-graph runs the step's branches, which --serial-step turns off");
  const Result ok = run(train + " --no-dependent-launch --no-graph --branched-no-graph");
  EXPECT_EQ(ok.status, 0) << ok.output;
}

// --step-graph needs a captured step: without the graph, on the CPU, with several variants or
// with --eval it is an error before any work, as is a file it cannot write.
TEST(TrainMlp, StepGraphNeedsTheGraphAndOneVariant) {
  const std::string dir = write_tiny_dataset(4, 8);
  const std::string train = tiny_train(dir) + " --epochs 1", graph = test_file("_step.json");
  EXPECT_FAILS_WITH(train + " --step-graph " + graph,
                    "--step-graph writes the step's CUDA graph; this run is on the CPU");
  EXPECT_FAILS_WITH(train + " --no-graph --step-graph " + graph,
                    "--step-graph writes the step's CUDA graph, which --no-graph turns off");
  EXPECT_FAILS_WITH(kTrain + " --compare --step-graph " + graph,
                    "--step-graph writes one variant's step; it cannot be combined with --compare");
  EXPECT_FAILS_WITH(kTrain + " --eval " + save_model() + " --step-graph " + graph,
                    "--step-graph needs a training run, not --eval");
  EXPECT_FAILS_WITH(train + " --step-graph ''", "--step-graph needs a file name, got ''");
  EXPECT_FAILS_WITH(train + " --step-graph /nonexistent-dir/g.json",
                    "--step-graph /nonexistent-dir/g.json: the folder /nonexistent-dir does not "
                    "exist or is not writable");
  EXPECT_FAILS_WITH(train + " --results " + graph + " --step-graph " + graph,
                    "--results " + graph + " and --step-graph " + graph + " are the same file");
  EXPECT_EQ(::access(graph.c_str(), F_OK), -1);
}

// On the GPU: the step's kernels in launch order, each waiting for an earlier one, with the run
// it came from; a run too short to capture the step says so and writes nothing.
TEST(TrainMlp, StepGraphWritesTheCapturedStep) {
  GPU_TEST_OR_SKIP();
  const std::string graph = test_file("_step.json");
  std::remove(graph.c_str());
  const std::string train = kTrain + " --device cuda --gemm vec --hidden 8 --batch 4 --epochs 1 " +
                            "--step-graph " + graph + " --data-dir ";
  const Result r = run(train + write_tiny_dataset(4, 8));  // two full batches: one captured
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("step graph written to " + graph), std::string::npos) << r.output;
  std::ifstream file(graph);
  std::stringstream text;
  text << file.rdbuf();
  const std::string json = text.str();
  for (const char* field : {"\"format\": \"gemm-mlp graph topology 1\"", "\"variant\": \"vec\"",
                            "\"model\": \"16-8-10\"", "\"batch\": \"4\"", "\"kernels\": [",
                            "\"index\": 0", "\"mangled\": \"_Z", "\"edges\": ["})
    EXPECT_NE(json.find(field), std::string::npos) << field << "\n" << json;
  std::remove(graph.c_str());
  EXPECT_FAILS_WITH(train + write_tiny_dataset(4, 7),  // one full batch: never captured
                    "--step-graph " + graph +
                        ": the training step was not captured as a CUDA graph (the trainer "
                        "captures the run's second full-size batch");
  EXPECT_EQ(::access(graph.c_str(), F_OK), -1);
}

// Output that cannot be written (standard output on a full disk) is an error, not silence.
TEST(TrainMlp, UnwritableOutputIsAnError) {
  const std::string dir = write_tiny_dataset(4, 8);
  EXPECT_FAILS_WITH("sh -c '" + tiny_train(dir) + " --epochs 1 >/dev/full'",
                    "train_mlp: error: writing the standard output failed");
}

// --save, --history and --results that are a folder, exist as something other than a regular
// file, or name one file twice are refused before any work, and left as they were.
TEST(TrainMlp, WriteTargetsAreCheckedBeforeTraining) {
  const std::string dir = write_tiny_dataset(4, 8);
  const std::string train = tiny_train(dir) + " --epochs 1";
  const std::string folder = test_file("_folder"), fifo = test_file("_fifo");
  std::system(("rm -rf " + folder + " " + fifo + " && mkdir -p " + folder + "/m.optim.safetensors")
                  .c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" --save " + folder + "/", "--save " + folder + "/: names a folder"},
      {" --save " + folder, "exists and is a directory, not a regular file"},
      {" --save " + folder + "/m.safetensors", "m.optim.safetensors: exists and is a directory"},
      {" --history " + folder, "--history " + folder + ": exists and is a directory"},
      {" --results " + folder, "--results " + folder + ": exists and is a directory"},
      {" --save " + fifo, "exists and is a FIFO (named pipe)"},
      {" --history /dev/null", "--history /dev/null: exists and is a character device"},
      {" --results /dev/full", "--results /dev/full: exists and is a character device"},
      {" --save /dev/full", "--save /dev/full: exists and is a character device"},
      {" --history " + folder + "/r.csv --results " + folder + "/../" +
           folder.substr(folder.rfind('/') + 1) + "/r.csv",
       "--history " + folder + "/r.csv and --results " + folder + "/../"},
      {" --save " + folder + "/x.safetensors --history " + folder + "/x.optim.safetensors",
       "--save's optimiser file " + folder + "/x.optim.safetensors and --history " + folder +
           "/x.optim.safetensors are the same file"},
  };
  for (const auto& [flags, message] : cases) {
    const Result r = run(train + flags);
    EXPECT_EQ(r.status, 1) << flags << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << flags << "\n" << r.output;
    EXPECT_EQ(r.output.find("epoch  1/1"), std::string::npos) << flags << "\n" << r.output;
  }
  struct stat st {};
  EXPECT_TRUE(::lstat(fifo.c_str(), &st) == 0 && S_ISFIFO(st.st_mode));
  EXPECT_EQ(run("ls -a " + folder + " | grep -c tmp").output, "0\n");
  // A device node of the test's own (root only), as the probe made them.
  const std::string node = test_file("_null");
  std::remove(node.c_str());
  if (::mknod(node.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) == 0) {
    for (const char* flag : {" --save ", " --history ", " --results "})
      EXPECT_FAILS_WITH(train + flag + node, "exists and is a character device");
    EXPECT_TRUE(::lstat(node.c_str(), &st) == 0 && S_ISCHR(st.st_mode));
  }
}

// SIGTERM or SIGINT: the run finishes its step, saves, prints the command that resumes it and
// exits 143 or 130; that command ends the run with the same parameters, bit for bit, as a run
// never stopped (cosine schedule). The child's output pipe is kept full so that it blocks within
// an epoch, where the signal then reaches it: a stop in mid-epoch, at the same step every time.
void stop_by_signal_and_resume(const std::string& device_flags, bool cpu) {
  // 96 steps an epoch, a line each: more than a full pipe, so that the run blocks in mid-epoch.
  const std::string dir = write_tiny_dataset(4, 384);
  const std::string straight = test_file("_straight.safetensors");
  const std::string common = kTrain + device_flags + " --hidden 8 --batch 4 --data-dir " + dir +
                             " --epochs 4 --log-interval 1";
  const Result s = run(common + " --save " + straight);
  ASSERT_EQ(s.status, 0) << s.output;
  for (int sig : {SIGTERM, SIGINT}) {
    SCOPED_TRACE(sig == SIGTERM ? "SIGTERM" : "SIGINT");
    const std::string ckpt = test_file(std::to_string(sig) + ".safetensors");
    const std::string history = test_file(std::to_string(sig) + "_history.csv");
    std::remove(ckpt.c_str());
    const Child child = spawn(common + " --save " + ckpt + " --history " + history, 8192);
    ASSERT_GT(child.pid, 0);
    ASSERT_TRUE(wait_until_blocked(child)) << "the run did not block on its full output pipe";
    ::kill(child.pid, sig);
    const Result stopped = finish(child);
    ASSERT_EQ(stopped.status, 128 + sig) << stopped.output;
    const size_t at = stopped.output.find("stopped by ");
    ASSERT_NE(at, std::string::npos) << stopped.output;
    // Where the pipe fills depends on the output's bytes, the same in every CPU run: in mid-epoch.
    if (cpu) {
      EXPECT_EQ(stopped.output.find(" after 0 of epoch "), std::string::npos) << stopped.output;
      EXPECT_NE(stopped.output.find("'s 96 steps; saved " + ckpt + " and "), std::string::npos)
          << stopped.output;
    }
    const size_t command = stopped.output.find("resume with: ");
    ASSERT_NE(command, std::string::npos) << stopped.output;
    const std::string line =
        stopped.output.substr(command + 13, stopped.output.find('\n', command) - command - 13);
    EXPECT_NE(line.find("--resume " + ckpt + " "), std::string::npos) << line;
    const Result resumed = run(line);
    ASSERT_EQ(resumed.status, 0) << line << "\n" << resumed.output;
    if (cpu) {
      EXPECT_NE(resumed.output.find(" of epoch "), std::string::npos) << resumed.output;
    }
    EXPECT_TRUE(same_tensors(ckpt, straight));
    EXPECT_TRUE(
        same_tensors(engine::optimizer_state_path(ckpt), engine::optimizer_state_path(straight)));
    EXPECT_EQ(lines_of(history).size(), 5u);  // every epoch, the stopped one once
  }
  // Without --save: the same stop, saying that nothing was saved.
  const Child child = spawn(common, 8192);
  ASSERT_TRUE(wait_until_blocked(child));
  ::kill(child.pid, SIGTERM);
  const Result stopped = finish(child);
  EXPECT_EQ(stopped.status, 143) << stopped.output;
  EXPECT_NE(stopped.output.find("nothing saved (no --save)"), std::string::npos) << stopped.output;
}

TEST(TrainMlp, StopBySignalSavesAndResumesExactly) {
  stop_by_signal_and_resume(" --device cpu", true);
}

// The same on the GPU, where a resumed step gathers its batch from the step counter on the device
// and the step is replayed as a CUDA graph.
TEST(TrainMlp, StopBySignalSavesAndResumesExactlyOnTheGpu) {
  GPU_TEST_OR_SKIP();
  stop_by_signal_and_resume(" --device cuda --gemm vec", false);
}

// kill -9 at moments spread over a run whose time goes mostly to saving (one step an epoch): each
// time, the checkpoint left is a pair that resumes, and the run carries on to the end with one
// history.
TEST(TrainMlp, KillDuringSavesLeavesAPairThatResumes) {
  const std::string dir = write_tiny_dataset(4, 4);
  const std::string ckpt = test_file(".safetensors"), history = test_file("_history.csv");
  std::remove(ckpt.c_str());
  std::remove(engine::optimizer_state_path(ckpt).c_str());
  const std::string resume =
      kTrain + " --device cpu --data-dir " + dir + " --resume " + ckpt + " --history " + history;
  int checked = 0;  // kills that found a checkpoint to resume (a kill may come before the first)
  for (int i = 0; i < 40 && checked < 6; ++i) {
    const bool exists = std::ifstream(ckpt).good();
    const Child child = spawn(exists ? resume
                                     : tiny_train(dir) + " --epochs 100000 --save " + ckpt +
                                           " --history " + history);
    // The first run's kill waits for its first save: on a loaded machine, starting and loading
    // can outlast every delay below, and then no kill would find a checkpoint.
    for (int waited = 0; !exists && !std::ifstream(ckpt).good() && waited < 60000; waited += 10)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + 37 * (i % 8)));
    ::kill(child.pid, SIGKILL);
    finish(child);
    if (!std::ifstream(ckpt).good()) continue;
    EXPECT_NO_THROW(engine::read_resume_point(ckpt));
    ++checked;
  }
  EXPECT_EQ(checked, 6);
  ASSERT_TRUE(std::ifstream(ckpt).good());
  const int saved = std::stoi(engine::read_resume_point(ckpt).metadata.at("epoch"));
  const Result r = run(resume + " --epochs " + std::to_string(saved + 2));
  ASSERT_EQ(r.status, 0) << r.output;
  const std::vector<std::string> rows = lines_of(history);
  ASSERT_EQ(rows.size(), static_cast<size_t>(saved + 3));
  EXPECT_EQ(rows.back().substr(0, rows.back().find(',')), std::to_string(saved + 2));
  EXPECT_EQ(temporaries_of(ckpt), 0);  // what the killed saves left is gone
}

// Two runs saving to one path: the second is refused before it trains, naming the path and the
// first's pid; once the first is gone (killed: its lock file is left behind), a run saves there.
TEST(TrainMlp, ASecondRunSavingToOnePathIsRefused) {
  const std::string dir = write_tiny_dataset(4, 8);
  const std::string ckpt = test_file(".safetensors"), lock = ckpt + ".lock";
  std::remove(ckpt.c_str());
  std::remove(lock.c_str());
  const Child first = spawn(tiny_train(dir) + " --epochs 100000 --save " + ckpt);
  ASSERT_GT(first.pid, 0);
  for (int i = 0; i < 3000 && !std::ifstream(ckpt).good(); ++i)  // saving: it holds the lock
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(std::ifstream(lock).good());
  const Result second = run(tiny_train(dir) + " --epochs 1 --seed 2 --save " + ckpt);
  EXPECT_EQ(second.status, 1) << second.output;
  EXPECT_NE(second.output.find("train_mlp: error: checkpoint " + ckpt +
                               " is being written by another run (pid " +
                               std::to_string(first.pid) + ", which holds " + lock +
                               "); two runs saving to one path would overwrite each other's "
                               "saves: wait for that run to end, or save to another path"),
            std::string::npos)
      << second.output;
  EXPECT_EQ(second.output.find("epoch  1/1"), std::string::npos) << second.output;
  // --resume of the same path is a second writer too.
  EXPECT_FAILS_WITH(
      kTrain + " --device cpu --data-dir " + dir + " --resume " + ckpt + " --epochs 200000",
      "is being written by another run (pid " + std::to_string(first.pid));
  ::kill(first.pid, SIGKILL);
  finish(first);
  EXPECT_TRUE(std::ifstream(lock).good());  // left behind, holding nothing
  const Result after = run(tiny_train(dir) + " --epochs 1 --seed 2 --save " + ckpt);
  EXPECT_EQ(after.status, 0) << after.output;
  EXPECT_FALSE(std::ifstream(lock).good());  // removed by the run that released it
  EXPECT_EQ(temporaries_of(ckpt), 0);
}

// The first save stopped between its two renames leaves the optimiser file alone (here: the
// model file removed): --eval and predict use it and say so; --resume continues from it and
// writes the model file again, saying so.
TEST(TrainMlp, OnlyTheOptimiserFileLeftIsUsedAndRepaired) {
  const std::string dir = write_tiny_dataset(4, 8);
  const std::string ckpt = test_file(".safetensors"), kept = test_file("_kept.safetensors");
  const std::string state = engine::optimizer_state_path(ckpt);
  ASSERT_EQ(run(tiny_train(dir) + " --epochs 1 --save " + ckpt).status, 0);
  ASSERT_EQ(std::rename(ckpt.c_str(), kept.c_str()), 0);
  const std::string eval = kTrain + " --device cpu --data-dir " + dir + " --eval ";
  // --eval: the same scores as the model file's, with a note.
  const Result good = run(eval + kept);
  ASSERT_EQ(good.status, 0) << good.output;
  const Result e = run(eval + ckpt);
  ASSERT_EQ(e.status, 0) << e.output;
  EXPECT_NE(e.output.find("note: " + ckpt +
                          " is missing (a first save stopped between its two renames leaves "
                          "only the optimiser file); using the parameters in " +
                          state + " (step 2, epoch 1)"),
            std::string::npos)
      << e.output;
  const auto scores = [](const std::string& out) { return out.substr(out.find("test loss")); };
  EXPECT_EQ(scores(e.output), scores(good.output));
  // predict: the same classes and probabilities, with a note.
  const std::string image = save_image();
  const Result p = run(kPredict + " --device cpu --model " + ckpt + " " + image);
  const Result p_good = run(kPredict + " --device cpu --model " + kept + " " + image);
  ASSERT_EQ(p.status, 0) << p.output;
  EXPECT_NE(p.output.find("predict: note: " + ckpt + " is missing"), std::string::npos) << p.output;
  EXPECT_EQ(p.output.substr(p.output.find(image + ":")), p_good.output);
  // --resume: continues, and writes the model file again.
  const Result r =
      run(kTrain + " --device cpu --data-dir " + dir + " --resume " + ckpt + " --epochs 2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("note: " + ckpt +
                          " is missing, as a first save stopped between its "
                          "two renames leaves it; resuming from " +
                          state),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("note: " + ckpt + " was missing; rewrote it from the parameters in " +
                          state + " (step 2, epoch 1), so that the pair is one save again"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("epoch  2/2"), std::string::npos) << r.output;
  EXPECT_EQ(engine::read_checkpoint_metadata(ckpt).at("epoch"), "2");
}

// The last save stopped between its two renames leaves the model file one save behind: --eval and
// predict use the newer optimiser file and say so; --resume of the finished run has nothing to
// train but rewrites the model file, byte for byte the one the save would have written.
TEST(TrainMlp, StaleModelFileIsNotUsedAndResumeRepairsIt) {
  const std::string dir = write_tiny_dataset(4, 8);
  const std::string ckpt = test_file(".safetensors"), older = test_file("_epoch1.safetensors");
  const std::string newer = test_file("_epoch2.safetensors");
  const std::string state = engine::optimizer_state_path(ckpt);
  const std::string resume = kTrain + " --device cpu --data-dir " + dir + " --resume " + ckpt;
  ASSERT_EQ(run(tiny_train(dir) + " --epochs 1 --schedule constant --save " + ckpt).status, 0);
  ASSERT_EQ(run("cp " + ckpt + " " + older).status, 0);
  ASSERT_EQ(run(resume + " --epochs 2").status, 0);
  ASSERT_EQ(run("cp " + ckpt + " " + newer + " && cp " + older + " " + ckpt).status, 0);

  const std::string note = "note: " + ckpt + " is from an earlier save (step 2, epoch 1) than " +
                           state +
                           " (step 4, epoch 2), as a save stopped between its two renames "
                           "leaves them; using the newer parameters in " +
                           state;
  const std::string eval = kTrain + " --device cpu --data-dir " + dir + " --eval ";
  const Result e = run(eval + ckpt), e_new = run(eval + newer);
  ASSERT_EQ(e.status, 0) << e.output;
  EXPECT_NE(e.output.find(note), std::string::npos) << e.output;
  const auto scores = [](const std::string& out) { return out.substr(out.find("test loss")); };
  EXPECT_EQ(scores(e.output), scores(e_new.output));
  const std::string image = save_image();
  const Result p = run(kPredict + " --device cpu --model " + ckpt + " " + image);
  const Result p_new = run(kPredict + " --device cpu --model " + newer + " " + image);
  ASSERT_EQ(p.status, 0) << p.output;
  EXPECT_NE(p.output.find("predict: " + note.substr(0, note.find(" than "))), std::string::npos)
      << p.output;
  EXPECT_EQ(p.output.substr(p.output.find(image + ":")), p_new.output);

  const Result r = run(resume);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("note: " + ckpt +
                          " was from an earlier save (step 2, epoch 1); rewrote "
                          "it from the parameters in " +
                          state + " (step 4, epoch 2), so that the pair is one save again"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("nothing to train: "), std::string::npos) << r.output;
  EXPECT_TRUE(file_bytes(ckpt) == file_bytes(newer)) << "the model file is not the save's";
  const Result again = run(resume);  // the pair is whole: no note
  EXPECT_EQ(again.output.find("note: "), std::string::npos) << again.output;
}

// A flipped exponent bit in a saved weight: --eval, predict and --resume refuse the file, naming
// the tensor, instead of scoring 10% with exit 0.
TEST(TrainMlp, AFlippedBitIsRefused) {
  const std::string dir = write_tiny_dataset(4, 8);
  const std::string ckpt = test_file(".safetensors");
  ASSERT_EQ(run(tiny_train(dir) + " --epochs 1 --save " + ckpt).status, 0);
  for (const std::string& file : {ckpt, engine::optimizer_state_path(ckpt)}) {
    const engine::safetensors::Header h = engine::safetensors::read_header(file);
    const auto w = std::find_if(h.tensors.begin(), h.tensors.end(),
                                [](const auto& t) { return t.name == "0.weight"; });
    std::string bytes = file_bytes(file);
    uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= uint64_t(static_cast<unsigned char>(bytes[i])) << (8 * i);
    bytes[8 + n + w->begin + 3] ^= 0x40;  // bit 30 of the first value: its exponent's highest
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
  }
  const std::string damaged = "checkpoint " + ckpt + ": tensor '0.weight': its data's CRC-32 is ";
  EXPECT_FAILS_WITH(kTrain + " --device cpu --data-dir " + dir + " --eval " + ckpt, damaged);
  EXPECT_FAILS_WITH(kPredict + " --device cpu --model " + ckpt + " " + save_image(), damaged);
  EXPECT_FAILS_WITH(
      kTrain + " --device cpu --data-dir " + dir + " --resume " + ckpt + " --epochs 2",
      "checkpoint " + engine::optimizer_state_path(ckpt) +
          ": tensor '0.weight': its data's CRC-32");
}

// --resume checks the data: a fingerprint of the training set in the metadata, compared before
// any training.
TEST(TrainMlp, ResumeOnOtherDataIsRefused) {
  const std::string dir = write_tiny_dataset(4, 8);
  const std::string ckpt = test_file(".safetensors");
  ASSERT_EQ(run(tiny_train(dir) + " --epochs 1 --save " + ckpt).status, 0);
  const std::string saved = engine::read_checkpoint_metadata(ckpt).at("data_fingerprint");
  EXPECT_EQ(saved.rfind("fnv1a64:", 0), 0u) << saved;
  {  // one pixel of the training images changed, the count the same
    std::fstream f(dir + "/train-images-idx3-ubyte",
                   std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(16 + 5);
    f.put(static_cast<char>(200));
  }
  const Result r =
      run(kTrain + " --device cpu --data-dir " + dir + " --resume " + ckpt + " --epochs 2");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("--resume " + ckpt + ": the run trained on data of fingerprint " + saved +
                          ", but the data here (" + dir + ", --train-limit 0) has fingerprint "),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("epoch  2/2"), std::string::npos) << r.output;
}

// A rate far too high on the tiny data: status 3, the epoch and the steps named (the Trainer's
// NonFiniteLoss, the one check).
TEST(TrainMlp, DivergenceOnTinyDataStopsWithStatus3) {
  const std::string dir = write_tiny_dataset(4, 8);
  const Result r = run(tiny_train(dir) + " --epochs 3 --lr 1e30");
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_NE(r.output.find("train_mlp: training diverged: the loss became non-finite in epoch "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(" (steps "), std::string::npos) << r.output;
}

}  // namespace

namespace {

// Issue 37: values that were taken silently are errors before any work, each naming the flag.
TEST(TrainMlp, SilentValuesAreErrors) {
  const std::string dir = write_tiny_dataset(4, 8);
  const std::string train = tiny_train(dir) + " --epochs 1";
  const std::string model = save_model();
  for (const char* flag :
       {" --save x.safetensors", " --history h.csv", " --epochs 3", " --train-limit 5",
        " --log-interval 2", " --log-seconds 5", " --compare", " --no-graph", " --serial-step",
        " --lr 0.5", " --optimizer adam", " --momentum 0.5", " --weight-decay 0",
        " --schedule constant", " --seed 3"})
    EXPECT_FAILS_WITH(kTrain + " --device cpu --eval " + model + flag,
                      "--eval scores a checkpoint and trains nothing: " +
                          std::string(flag).substr(1, std::string(flag).find(' ', 1) - 1) +
                          " does not apply");
  EXPECT_FAILS_WITH(train + " --optimizer adam --momentum 0.5",
                    "--momentum is SGD's: --optimizer adam does not use it");
  EXPECT_FAILS_WITH(train + " --save ' '", "--save ' ': the file name is blank");
  EXPECT_FAILS_WITH(train + " --history ' h.csv'",
                    "--history ' h.csv': the file name begins or ends with a space");
  EXPECT_FAILS_WITH(train + " --serial-step=2",
                    "--serial-step is a switch and takes no value, got '--serial-step=2'");
  EXPECT_FAILS_WITH(train + " --no-graph=false", "--no-graph is a switch and takes no value");
  // A missing Fashion-MNIST: the hint is the command that fetches Fashion-MNIST, there.
  const std::string nowhere = test_file("_no_fashion");
  EXPECT_FAILS_WITH(kTrain + " --device cpu --dataset fashion --data-dir " + nowhere,
                    "to download Fashion-MNIST there, run: ");
  EXPECT_FAILS_WITH(kTrain + " --device cpu --dataset fashion --data-dir " + nowhere,
                    "fetch_mnist.sh fashion " + nowhere);
}

// Output names are checked in full before any work: a name that fits the file system but whose
// temporary name does not, and a folder that is not a real one (/proc), fail before the epoch.
TEST(TrainMlp, OutputNamesAreCheckedInFullBeforeTraining) {
  const std::string dir = write_tiny_dataset(4, 8);
  const std::string train = tiny_train(dir) + " --epochs 1";
  const std::string long_name = kTmp + std::string(250, 'n');
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" --save " + long_name, "the name is too long for the file system"},
      {" --history " + long_name, "the name is too long for the file system"},
      {" --results " + long_name, "the name is too long for the file system"},
  };
  for (const auto& [flags, message] : cases) {
    const Result r = run(train + flags);
    EXPECT_EQ(r.status, 1) << flags << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << flags << "\n" << r.output;
    EXPECT_EQ(r.output.find("epoch  1/1"), std::string::npos) << flags << "\n" << r.output;
  }
  // /proc: not writable for a user; for root, a folder where no file can be created.
  for (const std::string flag : {"--save", "--history", "--results"}) {
    const std::string target = " /proc/gemm_mlp_test.out";
    const Result r = run(train + " " + flag + target);
    EXPECT_EQ(r.status, 1) << flag << "\n" << r.output;
    EXPECT_TRUE(r.output.find(flag + target + ": cannot be written") != std::string::npos ||
                r.output.find(flag + target +
                              ": the folder /proc does not exist or is not "
                              "writable") != std::string::npos)
        << flag << "\n"
        << r.output;
    EXPECT_EQ(r.output.find("epoch  1/1"), std::string::npos) << flag << "\n" << r.output;
  }
}

// Written to a file, the log keeps its order: stdout is line-buffered, so the header is in the
// file before the first epoch ends, and the stop notice (stderr) comes after it.
TEST(TrainMlp, LogInAFileKeepsItsOrder) {
  // 100000 steps an epoch: the first epoch lasts long enough to see the header before it ends.
  const std::string dir = write_tiny_dataset(4, 400000);
  const std::string log = test_file(".log");
  std::remove(log.c_str());
  const Child child = spawn("sh -c 'exec " + tiny_train(dir) + " --epochs 50 >" + log + " 2>&1'");
  ASSERT_GT(child.pid, 0);
  std::string text;
  for (int i = 0; i < 3000 && text.find("training examples") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    text = file_bytes(log);
  }
  EXPECT_NE(text.find("training examples"), std::string::npos)
      << "the header did not reach the file while the run trained:\n"
      << text;
  EXPECT_EQ(text.find("epoch  1/"), std::string::npos)
      << "the header reached the file only with the first epoch's line:\n"
      << text;
  ::kill(child.pid, SIGINT);
  const Result r = finish(child);
  EXPECT_EQ(r.status, 130) << r.output;
  text = file_bytes(log);
  const size_t header = text.find("training examples"), notice = text.find("stopping after"),
               stopped = text.find("stopped by SIGINT");
  ASSERT_NE(notice, std::string::npos) << text;
  ASSERT_NE(stopped, std::string::npos) << text;
  EXPECT_LT(header, notice) << text;
  EXPECT_LT(notice, stopped) << text;
}

// A second signal stops at once and says that no save was made. The run blocks on its full output
// pipe (as in StopBySignalSavesAndResumesExactly); the first signal's notice then blocks in its
// handler, so the second arrives while the first is being handled: two signals, every time.
TEST(TrainMlp, ASecondSignalStopsAtOnceSayingNoSaveWasMade) {
  const std::string dir = write_tiny_dataset(4, 384);
  const std::string ckpt = test_file(".safetensors");
  const Child child = spawn(tiny_train(dir) + " --epochs 4 --log-interval 1 --save " + ckpt, 8192);
  ASSERT_GT(child.pid, 0);
  ASSERT_TRUE(wait_until_blocked(child)) << "the run did not block on its full output pipe";
  ::kill(child.pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ::kill(child.pid, SIGINT);
  const Result r = finish(child);
  EXPECT_EQ(r.status, -1) << "not ended by the signal:\n" << r.output;
  EXPECT_NE(r.output.find("train_mlp: second signal: stopped at once; no save was made (the last "
                          "complete save, if any, stays whole)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("resume with:"), std::string::npos) << r.output;
}

// Whether the process runs train_mlp (not yet the shell or the fork before it, which may catch
// signals of their own) and has a handler for `sig` (its SigCgt mask in /proc).
bool catches(pid_t pid, int sig) {
  char exe[4096], train[PATH_MAX];
  const ssize_t n = ::readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), exe, sizeof exe);
  if (n <= 0 || ::realpath(kTrain.c_str(), train) == nullptr ||
      std::string(exe, static_cast<size_t>(n)) != train)
    return false;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("SigCgt:", 0) == 0)
      return (std::stoull(line.substr(7), nullptr, 16) >> (sig - 1)) & 1;
  return false;
}

// Ctrl-C during --eval, which writes nothing: it stops at once, saying so, with status 130 (not
// "stopping after this step", then the whole evaluation and status 0).
TEST(TrainMlp, ASignalStopsEvalAtOnce) {
  // 20000 test images through 16-2048-2048-10: about 170 GFLOP, seconds on the CPU.
  const std::string dir = test_file("_big_test");
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  write_idx(dir + "/t10k-images-idx3-ubyte", {20000, 4, 4});
  write_idx(dir + "/t10k-labels-idx1-ubyte", {20000});
  const std::string model = test_file(".safetensors");
  {
    engine::Context ctx(engine::Device::CPU, "cpu", 3);
    models::MLP mlp(ctx, 16, {2048, 2048}, 10);
    engine::save_checkpoint(ctx, model, mlp.parameters(), {});
  }
  const Child child = spawn(kTrain + " --device cpu --data-dir " + dir + " --eval " + model);
  ASSERT_GT(child.pid, 0);
  for (int i = 0; i < 10000 && !catches(child.pid, SIGINT); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ::kill(child.pid, SIGINT);
  const Result r = finish(child);
  EXPECT_EQ(r.status, 130) << r.output;
  EXPECT_NE(r.output.find("train_mlp: stopped by SIGINT; the evaluation did not finish (nothing "
                          "is written)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("test accuracy"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("stopping after this step"), std::string::npos) << r.output;
}

// Output that is not a terminal (here a pipe) and no --log-interval: a line every --log-seconds
// within an epoch, so that a log shows progress (the run is stopped once it has come); none with
// --log-seconds 0.
TEST(TrainMlp, OutputThatIsNotATerminalGetsALineEverySoManySeconds) {
  const std::string dir = write_tiny_dataset(4, 400000);  // seconds an epoch with 256,256
  const std::string train =
      kTrain + " --device cpu --hidden 256,256 --batch 4 --epochs 1 --data-dir " + dir;
  const Child child = spawn(train + " --log-seconds 1");
  ASSERT_GT(child.pid, 0);
  std::string out;
  char buf[4096];
  for (ssize_t n;
       out.find(" step ") == std::string::npos && (n = ::read(child.out, buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<size_t>(n));
  ::kill(child.pid, SIGKILL);
  out += finish(child).output;
  const size_t line = out.find("[cpu] epoch 1 step ");
  EXPECT_NE(line, std::string::npos) << out;
  EXPECT_LT(line, out.find("epoch  1/1")) << out;
  const Result quiet = run(train + " --train-limit 4000 --log-seconds 0");
  ASSERT_EQ(quiet.status, 0) << quiet.output;
  EXPECT_EQ(quiet.output.find(" step "), std::string::npos) << quiet.output;
}

// --resume of a checkpoint that cannot be replaced (chattr +i) is refused before training, not
// after its first epoch. Needs root and a file system with the flag (else skipped).
TEST(TrainMlp, ResumeOfAnImmutableCheckpointIsRefusedBeforeTraining) {
  const std::string dir = write_tiny_dataset(4, 8), ckpt = test_file(".safetensors");
  std::system(("chattr -i " + ckpt + " 2>/dev/null").c_str());
  ASSERT_EQ(run(tiny_train(dir) + " --epochs 1 --save " + ckpt).status, 0);
  if (std::system(("chattr +i " + ckpt + " 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "chattr +i is not available here (root and ext4 or similar needed)";
  const Result r =
      run(kTrain + " --device cpu --data-dir " + dir + " --resume " + ckpt + " --epochs 2");
  std::system(("chattr -i " + ckpt).c_str());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("--resume " + ckpt + ": exists and is immutable (chattr +i)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("epoch  2/2"), std::string::npos) << r.output;
}

// Inputs that are not regular files are refused at once: reading a FIFO would wait for a writer.
TEST(Predict, AFifoIsRefusedWithoutWaiting) {
  const std::string fifo = test_file("_fifo"), model = save_model(), image = save_image();
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Result m = run("timeout 20 " + kPredict + " --device cpu --model " + fifo + " " + image);
  EXPECT_EQ(m.status, 1) << m.output;
  EXPECT_NE(m.output.find("--model " + fifo + ": is a FIFO (named pipe), not a checkpoint file"),
            std::string::npos)
      << m.output;
  const Result i = run("timeout 20 " + kPredict + " --device cpu --model " + model + " " + fifo);
  EXPECT_EQ(i.status, 1) << i.output;
  EXPECT_NE(i.output.find(fifo + ": is a FIFO (named pipe), not an image file"), std::string::npos)
      << i.output;
  std::remove(fifo.c_str());
}

// train_spiral: an empty --gemm is no silent default, and --hidden is checked against the memory
// before anything is allocated, as train_mlp's layers are (not a std::bad_alloc).
TEST(TrainSpiral, EmptyGemmAndHugeHiddenAreErrors) {
  const std::string spiral = TRAIN_SPIRAL_BINARY;
  EXPECT_FAILS_WITH(spiral + " --device cpu --gemm ''", "--gemm needs a value, got ''");
  const Result r = run(spiral + " --device cpu --hidden 1000000");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("train_spiral: error: --hidden 1000000: the model's parameters, with "
                          "their gradients and Adam's state, needs "),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("bad_alloc"), std::string::npos) << r.output;
}

}  // namespace
