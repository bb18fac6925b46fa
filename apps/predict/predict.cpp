// predict: classifies digit images with a model that train_mlp saved.
//
//   predict --model model.safetensors [--device auto|cpu|cuda] [--top 3] IMAGE...
//
// Each image (PNG, JPEG, PGM, … anything stb_image reads) is prepared as MNIST's digits were
// (data::load_digit_like_mnist: grayscale, inverted when it is dark on light, cropped, scaled
// and centred), all of them go through the network as one batch, and each gets a line with its
// top classes and their softmax probabilities. The checkpoint's metadata gives the layer sizes.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "data/image.h"
#include "engine/engine.h"
#include "kernels/cuda_check.h"
#include "models/mlp.h"

namespace {

struct Options {
  std::string model;
  std::string device = "auto";
  std::string polarity = "auto";
  int top = 3;
  std::vector<std::string> images;
};

// "784-1024-1024-10" → {784, 1024, 1024, 10}.
std::vector<int> layer_sizes(const std::string& model, const engine::Metadata& m) {
  const auto it = m.find("layers");
  if (it == m.end())
    throw std::runtime_error(model + ": no 'layers' in its metadata (not saved by train_mlp?)");
  std::vector<int> sizes;
  std::stringstream in(it->second);
  for (std::string part; std::getline(in, part, '-');) {
    size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != part.size() || v < 1)
      throw std::runtime_error(model + ": bad layer sizes '" + it->second + "'");
    sizes.push_back(v);
  }
  if (sizes.size() < 2) throw std::runtime_error(model + ": bad layer sizes '" + it->second + "'");
  return sizes;
}

int run(const Options& o) {
  if (o.top < 1) throw std::runtime_error("--top must be >= 1");
  data::Polarity polarity = data::Polarity::Auto;
  if (o.polarity == "light")
    polarity = data::Polarity::LightOnDark;
  else if (o.polarity == "dark")
    polarity = data::Polarity::DarkOnLight;
  else if (o.polarity != "auto")
    throw std::runtime_error("--polarity must be auto, light or dark, got '" + o.polarity + "'");
  const engine::Device device = gemm_mlp::resolve_device(o.device, "--device");

  const std::vector<int> sizes = layer_sizes(o.model, engine::read_checkpoint_metadata(o.model));
  const int inputs = sizes.front(), classes = sizes.back();
  const int side = static_cast<int>(std::lround(std::sqrt(inputs)));
  if (side * side != inputs)
    throw std::runtime_error(o.model + ": " + std::to_string(inputs) +
                             " inputs are not a square image");
  const std::vector<int> hidden(sizes.begin() + 1, sizes.end() - 1);

  std::vector<float> pixels;
  for (const std::string& path : o.images) {
    const std::vector<float> v = data::load_digit_like_mnist(path, side, side, polarity);
    pixels.insert(pixels.end(), v.begin(), v.end());
  }
  const int n = static_cast<int>(o.images.size());

  engine::Context ctx(device, /*seed=*/1);
  models::MLP mlp(ctx, inputs, hidden, classes);
  mlp.prepare(ctx, n);
  engine::load_checkpoint(ctx, o.model, mlp.parameters());
  const engine::Tensor x = engine::Tensor::from_host(device, n, inputs, pixels);
  const std::vector<float> logits = mlp.forward(ctx, x).download(ctx.stream());

  for (int i = 0; i < n; ++i) {
    const float* z = &logits[static_cast<size_t>(i) * classes];
    const float top = *std::max_element(z, z + classes);
    std::vector<double> p(classes);
    double sum = 0.0;
    for (int c = 0; c < classes; ++c) sum += p[c] = std::exp(static_cast<double>(z[c] - top));
    std::vector<int> order(classes);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p[a] > p[b]; });
    std::printf("%s:", o.images[i].c_str());
    for (int k = 0; k < std::min(o.top, classes); ++k)
      std::printf("%s %d (%.1f%%)", k ? "," : "", order[k], 100.0 * p[order[k]] / sum);
    std::printf("\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Classify digit images with a model saved by train_mlp --save."};
  app.add_option("--model", o.model, "The checkpoint (safetensors) to load")->required();
  app.add_option("--device", o.device, "auto, cpu or cuda")->capture_default_str();
  app.add_option("--top", o.top, "How many classes to print per image")->capture_default_str();
  app.add_option("--polarity", o.polarity,
                 "auto (by the image's border), light (a light digit on dark, as MNIST) or dark "
                 "(a dark digit on light paper)")
      ->capture_default_str();
  app.add_option("images", o.images, "PNG, JPEG, PGM, BMP, … images of one digit each")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "predict: error: " << e.what() << "\n";
    return 1;
  }
}
