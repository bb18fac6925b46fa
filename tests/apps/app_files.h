// What the app tests share (tests/apps/*_test.cpp, one binary): the binaries' paths, files named
// after the running test, small models, images and IDX datasets written for a case, and a program
// run as a child process whose output a test reads while it runs. ctest runs each test as its own
// process, in parallel.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stb_image_write.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "models/mlp.h"
#include "run_app.h"

namespace app_test {

inline const std::string kPredict = PREDICT_BINARY;
inline const std::string kTrain = TRAIN_MLP_BINARY;
inline const std::string kTmp = ::testing::TempDir();

// ctest runs each test as its own process, in parallel: files are named after the test.
inline std::string test_file(const std::string& suffix) {
  return kTmp + "apps_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + suffix;
}

// An untrained 784-16-10 model saved as train_mlp saves it (layer sizes in the metadata).
inline std::string save_model() {
  const std::string path = test_file(".safetensors");
  engine::Context ctx(engine::Device::CPU, "cpu", 3);
  models::MLP mlp(ctx, 784, {16}, 10);
  engine::save_checkpoint(ctx, path, mlp.parameters(), {{"layers", mlp.layer_sizes()}});
  return path;
}

// An untrained 784-4-10 (or inputs-4-10) model as PyTorch's save_file(model.state_dict()) saves
// it: no metadata, unless some is given.
inline std::string save_plain_model(int inputs = 784, const engine::Metadata& metadata = {}) {
  const std::string path = test_file("_plain.safetensors");
  engine::Context ctx(engine::Device::CPU, "cpu", 3);
  models::MLP mlp(ctx, inputs, {4}, 10);
  engine::save_checkpoint(ctx, path, mlp.parameters(), metadata);
  return path;
}

// A 50×40 dark-on-light picture with a bar in it.
inline std::string save_image() {
  const std::string path = test_file(".png");
  std::vector<unsigned char> px(50 * 40, 230);
  for (int y = 8; y < 32; ++y)
    for (int x = 20; x < 26; ++x) px[y * 50 + x] = 20;
  stbi_write_png(path.c_str(), 50, 40, 1, px.data(), 50);
  return path;
}

// An IDX file of unsigned bytes: dims, then every value = i % 256.
inline void write_idx(const std::string& path, const std::vector<uint32_t>& dims) {
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
inline std::string write_tiny_dataset(int test_side, uint32_t train = 3) {
  const std::string dir = test_file("_tiny");
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  write_idx(dir + "/train-images-idx3-ubyte", {train, 4, 4});
  write_idx(dir + "/train-labels-idx1-ubyte", {train});
  write_idx(dir + "/t10k-images-idx3-ubyte", {2, uint32_t(test_side), uint32_t(test_side)});
  write_idx(dir + "/t10k-labels-idx1-ubyte", {2});
  return dir;
}

// The real MNIST files, when scripts/setup/fetch_mnist.sh has put them in data/mnist (or
// GEMM_MLP_MNIST_DIR points elsewhere); a missing dataset skips, as in RealMnist.*.
inline std::string mnist_dir() {
  const char* env = std::getenv("GEMM_MLP_MNIST_DIR");
  return env != nullptr && *env != '\0' ? env : GEMM_MLP_SOURCE_DIR "/data/mnist";
}

#define MNIST_OR_SKIP()                                                  \
  if (!std::ifstream(mnist_dir() + "/t10k-labels-idx1-ubyte").good() &&  \
      !std::ifstream(mnist_dir() + "/t10k-labels-idx1-ubyte.gz").good()) \
  GTEST_SKIP() << "MNIST is not in " << mnist_dir() << " (run scripts/setup/fetch_mnist.sh)"

inline std::string file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// train_mlp on a small model, on the CPU, over the data in `dir`.
inline std::string tiny_train(const std::string& dir) {
  return kTrain + " --device cpu --hidden 8 --batch 4 --data-dir " + dir;
}

// A train_mlp running on its own, its stdout and stderr in one pipe that the test reads.
struct Child {
  pid_t pid;
  int out;
};

inline Child spawn(const std::string& command, int pipe_size = 0) {
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
inline Result finish(const Child& c) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(c.out, buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<size_t>(n));
  ::close(c.out);
  int status = 0;
  ::waitpid(c.pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace app_test
