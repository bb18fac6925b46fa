// predict: classifies images with a model that train_mlp saved, or a PyTorch state_dict of
// nn.Sequential(Linear, ReLU, ..., Linear) saved with safetensors.
//
//   predict --model model.safetensors [--device auto|cpu|cuda] [--top 3] [--dataset NAME] IMAGE...
//
// Each image (PNG, JPEG, PGM, … anything stb_image reads) is prepared as MNIST's digits were
// (data::load_digit_like_mnist: grayscale, inverted when it is dark on light, cropped, scaled
// and centred), all of them go through the network as one batch, and each gets a line with its
// top classes, named as the checkpoint's dataset names them (--dataset overrides; mnist where it
// names none), and their softmax probabilities. The layer sizes come from the tensors' names and
// shapes (models::mlp_sizes, from the header alone). Of a training pair, the newer whole file is
// used (a note says when that is the optimiser file), and every tensor's checksum is verified. A
// blank image gets a warning; an image that cannot be read is reported and skipped, and the exit
// status is then 1.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include "apps/common/parse_number.h"
#include "base/cuda_check.h"
#include "base/file_kind.h"
#include "base/openblas_threads.h"
#include "data/datasets.h"
#include "data/image.h"
#include "engine/engine.h"
#include "models/mlp.h"

namespace {

struct Options {
  std::string model;
  std::string device = "auto";
  std::string polarity = "auto";
  std::string top = "3";
  std::string dataset;
  bool dataset_given = false;  // else the checkpoint's
  std::vector<std::string> images;
};

// An image whose pixels span fewer gray levels than this (of 255) holds no digit: a blank page or
// a constant colour, which the network still classifies, often at 60-90%.
constexpr float kBlankGrayLevels = 16.0f;

// The gray levels (0..255) an image spans, seen at `side` × `side`.
float gray_level_span(const std::string& path, int side) {
  const std::vector<float> v = data::load_digit_image(path, side, side);
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return (*hi - *lo) * data::kMnistStd * 255.0f;
}

int run(const Options& o) {
  const int top = apps::parse_int("--top", o.top, 1);
  data::Polarity polarity = data::Polarity::Auto;
  if (o.polarity == "light")
    polarity = data::Polarity::LightOnDark;
  else if (o.polarity == "dark")
    polarity = data::Polarity::DarkOnLight;
  else if (o.polarity != "auto")
    throw std::runtime_error("--polarity must be auto, light or dark, got '" + o.polarity + "'");
  const engine::Device device = gemm_mlp::resolve_device(o.device, "--device");
  if (device == engine::Device::CPU) gemm::reserve_host_scratch();  // before the model's memory

  // A FIFO would wait for a writer; a directory or a device is no checkpoint either.
  if (const char* kind = gemm_mlp::non_regular_kind(o.model))
    throw std::runtime_error("--model " + o.model + ": is " + kind + ", not a checkpoint file");
  // The newer whole file of a training pair: the model file, or its optimiser file after a save
  // stopped between its two renames (engine::find_parameters), said so.
  const engine::ParameterFile file = engine::find_parameters(o.model);
  if (!file.note.empty()) std::cerr << "predict: note: " << file.note << "\n";
  const engine::safetensors::Header& header = file.header;
  const models::MlpSizes sizes = models::mlp_sizes(file.path, header);
  data::require_input_normalisation(o.model, header.metadata);
  const data::DatasetInfo* dataset = data::checkpoint_dataset(o.model, header.metadata);
  if (o.dataset_given) {
    dataset = data::find_dataset(o.dataset);
    if (dataset == nullptr) apps::bad_value("--dataset", o.dataset, data::dataset_names());
  } else if (dataset == nullptr) {
    dataset = data::find_dataset("mnist");
    std::cerr << "predict: note: " << o.model
              << " names no dataset; printing mnist's classes (--dataset to choose)\n";
  }
  const int classes = static_cast<int>(dataset->class_names.size());
  if (sizes.classes != classes)
    throw std::runtime_error(o.model + ": the model " + sizes.text() + " has " +
                             std::to_string(sizes.classes) + " outputs, but " + dataset->name +
                             " has " + std::to_string(classes) + " classes");
  const int inputs = sizes.inputs;
  const int side = static_cast<int>(std::lround(std::sqrt(inputs)));
  if (side * side != inputs)
    throw std::runtime_error(o.model + ": " + std::to_string(inputs) +
                             " inputs are not a square image");

  // An image that cannot be read is reported, and the others still classified.
  std::vector<float> pixels;
  std::vector<std::string> read;
  for (const std::string& path : o.images) {
    try {
      const std::vector<float> v = data::load_digit_like_mnist(path, side, side, polarity);
      const float span = gray_level_span(path, 4 * side);
      if (span < kBlankGrayLevels)
        std::cerr << "predict: warning: " << path << " is blank (its pixels span "
                  << std::lround(span) << " of 255 gray levels): its classes mean nothing\n";
      pixels.insert(pixels.end(), v.begin(), v.end());
      read.push_back(path);
    } catch (const std::exception& e) {
      std::cerr << "predict: error: " << e.what() << "\n";
    }
  }
  const int n = static_cast<int>(read.size());
  const int failed = static_cast<int>(o.images.size()) - n;
  if (n > 0) {
    engine::Context ctx(device, /*seed=*/1);
    models::MLP mlp(ctx, inputs, sizes.hidden, sizes.classes);
    mlp.prepare(ctx, n);
    engine::load_parameters(ctx, file, mlp.parameters());
    const engine::Tensor x = engine::Tensor::from_host(device, n, inputs, pixels);
    const std::vector<float> logits = mlp.forward(ctx, x).download(ctx.stream());

    for (int i = 0; i < n; ++i) {
      const float* z = &logits[static_cast<size_t>(i) * classes];
      const float best = *std::max_element(z, z + classes);
      std::vector<double> p(classes);
      double sum = 0.0;
      for (int c = 0; c < classes; ++c) sum += p[c] = std::exp(static_cast<double>(z[c] - best));
      std::vector<int> order(classes);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p[a] > p[b]; });
      std::printf("%s:", read[i].c_str());
      for (int k = 0; k < std::min(top, classes); ++k)
        std::printf("%s %s (%.1f%%)", k ? "," : "", dataset->class_names[order[k]],
                    100.0 * p[order[k]] / sum);
      std::printf("\n");
    }
  }
  if (failed > 0) {
    std::fflush(stdout);
    std::cerr << "predict: " << failed << " of " << o.images.size()
              << " images could not be read\n";
    return 1;
  }
  return 0;
}

}  // namespace

GEMM_MLP_ONE_OPENBLAS_THREAD_UNDER_ADDRESS_LIMIT;

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "Classify images with a model saved by train_mlp --save, or a PyTorch state_dict of "
      "nn.Sequential(Linear, ReLU, ..., Linear) saved with safetensors."};
  app.add_option("--model", o.model, "The checkpoint (safetensors) to load")->required();
  app.add_option("--device", o.device, "auto, cpu or cuda")->capture_default_str();
  app.add_option("--top", o.top, "How many classes to print per image")
      ->capture_default_str()
      ->type_name("UINT");
  const CLI::Option* dataset = app.add_option(
      "--dataset", o.dataset,
      "Whose class names to print: mnist or fashion (default: the checkpoint's, else "
      "mnist)");
  app.add_option("--polarity", o.polarity,
                 "auto (by the image's border), light (a light digit on dark, as MNIST) or dark "
                 "(a dark digit on light paper)")
      ->capture_default_str();
  app.add_option("images", o.images, "PNG, JPEG, PGM, BMP, … images of one digit each")->required();
  CLI11_PARSE(app, argc, argv);
  o.dataset_given = dataset->count() > 0;
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "predict: error: " << e.what() << "\n";
    return 1;
  }
}
