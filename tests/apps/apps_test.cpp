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
                    "1e+18 parameters; with their gradients and optimiser state they need ");
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
