// MNIST as float tensors ready for training. Fashion-MNIST ships under the same file names and in
// the same format (28×28, 10 classes), so the same loader reads it from its own directory. Both are
// normalised with MNIST's mean and std; Fashion-MNIST's own (about 0.286 and 0.353) would centre
// it a little better.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace data {

// Pixel normalisation shared by the dataset and by single images: (v/255 − mean) / std.
constexpr float kMnistMean = 0.1307f;
constexpr float kMnistStd = 0.3081f;

inline float normalise_pixel(float v_0_255) { return (v_0_255 / 255.0f - kMnistMean) / kMnistStd; }

struct Dataset {
  int count = 0;
  int rows = 0, cols = 0;
  int classes = 10;
  std::vector<float> images;    // count × rows·cols, row-major, normalised
  std::vector<int32_t> labels;  // count, each in [0, classes)
  int features() const { return rows * cols; }
};

enum class Split { Train, Test };

// Loads train-{images-idx3,labels-idx1}-ubyte (Split::Train) or t10k-… (Split::Test) from `dir`,
// each either raw or with a .gz suffix. Throws gemm_mlp::Error naming the file for a missing file
// (and pointing at scripts/setup/fetch_mnist.sh), a malformed file, image and label counts that
// disagree, a dataset larger than the host memory available (both headers are checked before
// any data is read; base/memory_limit.h), or a label outside 0..9.
//
// `dataset` ("mnist" or "fashion", as data/datasets.h names them) decides the hint of a missing
// file (fetch_command), and is checked against the labels: one dataset asked for, but the labels
// begin as the other's published files do (MNIST's training labels 5 0 4 1 9 ..., Fashion-MNIST's
// 9 0 0 3 0 ...), is an error, not one dataset trained on, or scored, under the other's name.
Dataset load_mnist(const std::string& dir, Split split, const std::string& dataset = "mnist");

// The command that fetches `dataset` ("mnist" or "fashion") into `dir`, as a shell runs it:
// fetch_mnist.sh where it is (installed beside the program as gemm_mlp_fetch_mnist, or in the
// source tree this library was built from; relative when the working directory is that tree),
// then "fashion" for Fashion-MNIST, then the folder.
std::string fetch_command(const std::string& dataset, const std::string& dir);

}  // namespace data
