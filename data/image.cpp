#include "data/image.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>

#include "data/idx.h"
#include "data/mnist.h"

namespace data {
namespace {

// Output sample i of a 1-D resampling from n_in to n_out: a list of (source index, weight)
// pairs whose weights sum to 1.
using Taps = std::vector<std::vector<std::pair<int, float>>>;

Taps resample_taps(int n_in, int n_out) {
  Taps taps(n_out);
  const double scale = static_cast<double>(n_in) / n_out;  // source pixels per output pixel
  for (int i = 0; i < n_out; ++i) {
    if (scale >= 1.0) {
      // Shrinking (or equal size): average the source pixels that output pixel i covers,
      // [i·scale, (i+1)·scale), each weighted by its overlap.
      const double lo = i * scale, hi = (i + 1) * scale;
      for (int j = static_cast<int>(lo); j < n_in && j < hi; ++j) {
        const double overlap = std::min<double>(j + 1, hi) - std::max<double>(j, lo);
        if (overlap > 0) taps[i].emplace_back(j, static_cast<float>(overlap / scale));
      }
    } else {
      // Enlarging: linear interpolation between the two nearest source pixel centres.
      const double x = std::clamp((i + 0.5) * scale - 0.5, 0.0, static_cast<double>(n_in - 1));
      const int j0 = static_cast<int>(x);
      const int j1 = std::min(j0 + 1, n_in - 1);
      const float t = static_cast<float>(x - j0);
      taps[i].emplace_back(j0, 1.0f - t);
      if (j1 != j0) taps[i].emplace_back(j1, t);
    }
  }
  return taps;
}

}  // namespace

std::vector<float> load_digit_image(const std::string& path, int rows, int cols) {
  if (rows <= 0 || cols <= 0)
    throw Error(path + ": target size " + std::to_string(rows) + "x" + std::to_string(cols) +
                " must be positive");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (!file) throw Error(path + ": cannot open: " + std::strerror(errno));

  int w = 0, h = 0, channels = 0;
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load_from_file(file.get(), &w, &h, &channels, 0), &stbi_image_free);
  if (!pixels)
    throw Error(path + ": cannot decode image: " + stbi_failure_reason() +
                " (not a valid PNG/JPEG/BMP/GIF/TGA/PNM file?)");

  // Grayscale in 0..255. Colour uses Rec. 601 luma; alpha composites over black, so a transparent
  // background stays black as MNIST expects.
  std::vector<float> gray(static_cast<size_t>(w) * h);
  const stbi_uc* p = pixels.get();
  for (size_t i = 0; i < gray.size(); ++i, p += channels) {
    float v = 0, a = 255;
    if (channels <= 2) {
      v = p[0];
    } else {
      v = 0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2];
    }
    if (channels == 2) a = p[1];
    if (channels == 4) a = p[3];
    gray[i] = v * (a / 255.0f);
  }

  // Separable resize: rows of the source first (w → cols), then columns (h → rows).
  const Taps tx = resample_taps(w, cols), ty = resample_taps(h, rows);
  std::vector<float> wide(static_cast<size_t>(h) * cols, 0.0f);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < cols; ++x) {
      float s = 0;
      for (const auto& [j, wt] : tx[x]) s += wt * gray[static_cast<size_t>(y) * w + j];
      wide[static_cast<size_t>(y) * cols + x] = s;
    }
  std::vector<float> out(static_cast<size_t>(rows) * cols);
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      float s = 0;
      for (const auto& [j, wt] : ty[y]) s += wt * wide[static_cast<size_t>(j) * cols + x];
      out[static_cast<size_t>(y) * cols + x] = normalise_pixel(std::clamp(s, 0.0f, 255.0f));
    }
  return out;
}

}  // namespace data
