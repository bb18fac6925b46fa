// train_mlp --eval: checkpoints of its own and PyTorch state_dicts, scored on the data they name,
// refused where the metadata or the data do not fit; Ctrl-C stops it at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "app_files.h"

namespace {

using namespace app_test;

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

}  // namespace
