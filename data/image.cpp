#include "data/image.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>
#define STB_IMAGE_RESIZE_IMPLEMENTATION
#include <stb_image_resize.h>

#include "base/file_kind.h"
#include "base/memory_limit.h"
#include "data/idx.h"
#include "data/mnist.h"

namespace data {
namespace {

// A grayscale image, values 0..255, row-major.
struct Gray {
  int w = 0, h = 0;
  std::vector<float> v;
  float at(int x, int y) const { return v[static_cast<size_t>(y) * w + x]; }
};

[[noreturn]] void fail_to_decode(const std::string& path) {
  throw Error(path + ": cannot decode image: " + stbi_failure_reason() +
              " (not a valid PNG/JPEG/BMP/GIF/TGA/PNM file?)");
}

// The dimensions from the header (stbi_info), checked before anything is decoded: a small
// compressed file can claim a huge image.
void check_image_size(const std::string& path, std::FILE* file) {
  int w = 0, h = 0, channels = 0;
  if (!stbi_info_from_file(file, &w, &h, &channels)) fail_to_decode(path);
  const uint64_t pixels = uint64_t(w) * uint64_t(h);
  const std::string size = std::to_string(w) + "x" + std::to_string(h);
  if (pixels > kMaxImagePixels)
    throw Error(path + ": the image is " + size + " (" + std::to_string(pixels) +
                " pixels), more than the " + std::to_string(kMaxImagePixels) + " pixels (" +
                std::to_string(kMaxImagePixels >> 20) +
                " megapixels) an input image may have; scale it down first");
  // The compressed file, the decoded pixels and their grayscale floats are held together.
  struct stat st;
  const uint64_t file_bytes = ::fstat(::fileno(file), &st) == 0 ? uint64_t(st.st_size) : 0;
  gemm_mlp::check_host_allocation(
      gemm_mlp::byte_sum({file_bytes, pixels * uint64_t(channels), pixels * sizeof(float)}),
      path + ": decoding the " + size + " image");
}

Gray load_gray(const std::string& path) {
  // Opening a FIFO would wait for a writer; a directory or a device is no image either.
  if (const char* kind = gemm_mlp::non_regular_kind(path))
    throw Error(path + ": is " + kind + ", not an image file");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (!file) throw Error(path + ": cannot open: " + std::strerror(errno));
  int w = 0, h = 0, channels = 0;
  check_image_size(path, file.get());
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load_from_file(file.get(), &w, &h, &channels, 0), &stbi_image_free);
  if (!pixels) fail_to_decode(path);
  // Colour uses Rec. 601 luma; alpha composites over black, so a transparent background stays
  // black as MNIST expects.
  Gray g{w, h, std::vector<float>(static_cast<size_t>(w) * h)};
  const stbi_uc* p = pixels.get();
  for (size_t i = 0; i < g.v.size(); ++i, p += channels) {
    const float v = channels <= 2 ? p[0] : 0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2];
    const float a = channels == 2 ? p[1] : channels == 4 ? p[3] : 255.0f;
    g.v[i] = v * (a / 255.0f);
  }
  return g;
}

// The region [x0, x0 + w) × [y0, y0 + h) of g resized to out_w × out_h.
std::vector<float> resize(const Gray& g, int x0, int y0, int w, int h, int out_w, int out_h) {
  std::vector<float> out(static_cast<size_t>(out_w) * out_h);
  const auto filter = [](int in, int out) {
    return out < in ? STBIR_FILTER_BOX : out > in ? STBIR_FILTER_TRIANGLE : STBIR_FILTER_BOX;
  };
  const int stride = g.w * static_cast<int>(sizeof(float));
  if (!stbir_resize(g.v.data() + static_cast<size_t>(y0) * g.w + x0, w, h, stride, out.data(),
                    out_w, out_h, 0, STBIR_TYPE_FLOAT, 1, STBIR_ALPHA_CHANNEL_NONE, 0,
                    STBIR_EDGE_CLAMP, STBIR_EDGE_CLAMP, filter(w, out_w), filter(h, out_h),
                    STBIR_COLORSPACE_LINEAR, nullptr))
    throw Error("image: stb_image_resize failed (out of memory?)");
  return out;
}

void require_size(const std::string& path, int rows, int cols) {
  if (rows <= 0 || cols <= 0)
    throw Error(path + ": target size " + std::to_string(rows) + "x" + std::to_string(cols) +
                " must be positive");
}

std::vector<float> normalised(std::vector<float> v) {
  for (float& x : v) x = normalise_pixel(std::clamp(x, 0.0f, 255.0f));
  return v;
}

}  // namespace

std::vector<float> load_digit_image(const std::string& path, int rows, int cols) {
  require_size(path, rows, cols);
  const Gray g = load_gray(path);
  return normalised(resize(g, 0, 0, g.w, g.h, cols, rows));
}

std::vector<float> load_digit_like_mnist(const std::string& path, int rows, int cols,
                                         Polarity polarity) {
  require_size(path, rows, cols);
  Gray g = load_gray(path);
  if (polarity == Polarity::Auto) {
    double border = 0.0;
    int n = 0;
    for (int x = 0; x < g.w; ++x) border += g.at(x, 0) + g.at(x, g.h - 1), n += 2;
    for (int y = 0; y < g.h; ++y) border += g.at(0, y) + g.at(g.w - 1, y), n += 2;
    polarity = border / n > 127.5 ? Polarity::DarkOnLight : Polarity::LightOnDark;
  }
  if (polarity == Polarity::DarkOnLight)
    for (float& v : g.v) v = 255.0f - v;

  // The ink's bounding box.
  const float ink = 0.25f * *std::max_element(g.v.begin(), g.v.end());
  int x0 = g.w, y0 = g.h, x1 = -1, y1 = -1;
  for (int y = 0; y < g.h; ++y)
    for (int x = 0; x < g.w; ++x)
      if (g.at(x, y) > ink && ink > 0.0f)
        x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
  if (x1 < 0) x0 = 0, y0 = 0, x1 = g.w - 1, y1 = g.h - 1;  // blank: the whole image
  const int bw = x1 - x0 + 1, bh = y1 - y0 + 1;

  // Longer side to 20/28 of the output (MNIST's 20-pixel box in 28), aspect kept.
  const double box = 20.0 / 28.0 * std::min(rows, cols);
  const double scale = box / std::max(bw, bh);
  const int sw = std::max(1, static_cast<int>(std::lround(bw * scale)));
  const int sh = std::max(1, static_cast<int>(std::lround(bh * scale)));
  const Gray digit{sw, sh, resize(g, x0, y0, bw, bh, sw, sh)};

  // Centre of mass to the output's centre, clamped so the digit stays inside.
  double mass = 0.0, mx = 0.0, my = 0.0;
  for (int y = 0; y < sh; ++y)
    for (int x = 0; x < sw; ++x) {
      const double v = std::max(0.0f, digit.at(x, y));
      mass += v, mx += v * (x + 0.5), my += v * (y + 0.5);
    }
  const double cx = mass > 0 ? mx / mass : sw / 2.0, cy = mass > 0 ? my / mass : sh / 2.0;
  const int ox = std::clamp(static_cast<int>(std::lround(cols / 2.0 - cx)), 0, cols - sw);
  const int oy = std::clamp(static_cast<int>(std::lround(rows / 2.0 - cy)), 0, rows - sh);
  std::vector<float> out(static_cast<size_t>(rows) * cols, 0.0f);
  for (int y = 0; y < sh; ++y)
    for (int x = 0; x < sw; ++x) out[static_cast<size_t>(oy + y) * cols + ox + x] = digit.at(x, y);
  return normalised(std::move(out));
}

}  // namespace data
