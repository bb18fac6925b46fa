#include "data/image.h"

#include <sys/stat.h>
#include <zlib.h>  // crc32: a PNG chunk's check

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

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

// What stb_image does not check or say, read from the file's own structure: a PNG's size (its
// IHDR; stb_image calls a PNG too large to decode an "unknown image type"), whether each chunk's
// CRC-32 matches and whether the file reaches its IEND chunk; how many frames a GIF has (stb_image
// reads the first).
struct FileStructure {
  bool png = false;
  uint64_t width = 0, height = 0;  // a PNG's IHDR; 0 when not read
  std::string bad_crc;             // the first chunk whose CRC-32 does not match, e.g. "IDAT"
  bool png_end = false;            // the IEND chunk was reached
  int gif_frames = 0;
};

uint32_t big_endian(const unsigned char* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}

// Walks a PNG's chunks (length, type, data, CRC-32), `file` just after its signature.
void read_png_chunks(std::FILE* file, FileStructure& s) {
  std::vector<unsigned char> data(size_t{1} << 16);
  for (unsigned char head[8]; std::fread(head, 1, 8, file) == 8;) {
    const uint32_t length = big_endian(head);
    const std::string type(reinterpret_cast<const char*>(head + 4), 4);
    uLong crc = crc32(0L, head + 4, 4);
    if (type == "IHDR" && length >= 8) {
      unsigned char ihdr[8];
      if (std::fread(ihdr, 1, 8, file) != 8) return;
      s.width = big_endian(ihdr);
      s.height = big_endian(ihdr + 4);
      crc = crc32(crc, ihdr, 8);
    }
    for (uint64_t left = length - (type == "IHDR" && length >= 8 ? 8 : 0); left > 0;) {
      const size_t n = std::fread(data.data(), 1, std::min<uint64_t>(left, data.size()), file);
      if (n == 0) return;  // the file ends inside the chunk
      crc = crc32(crc, data.data(), static_cast<uInt>(n));
      left -= n;
    }
    unsigned char stored[4];
    if (std::fread(stored, 1, 4, file) != 4) return;
    if (big_endian(stored) != (crc & 0xFFFFFFFFu) && s.bad_crc.empty()) s.bad_crc = type;
    if (type == "IEND") {
      s.png_end = true;
      return;
    }
  }
}

// Skips a GIF's data sub-blocks (a size byte, that many bytes; a size of 0 ends them). False at
// the file's end.
bool skip_gif_blocks(std::FILE* file) {
  for (int size; (size = std::fgetc(file)) != EOF;) {
    if (size == 0) return true;
    if (std::fseek(file, size, SEEK_CUR) != 0) return false;
  }
  return false;
}

// Counts a GIF's image descriptors (its frames), `file` just after its 6-byte signature.
void read_gif_frames(std::FILE* file, FileStructure& s) {
  unsigned char screen[7];
  if (std::fread(screen, 1, 7, file) != 7) return;
  const auto table_bytes = [](int packed) {
    return (packed & 0x80) ? 3L << ((packed & 7) + 1) : 0L;
  };
  if (std::fseek(file, table_bytes(screen[4]), SEEK_CUR) != 0) return;
  for (int block; (block = std::fgetc(file)) != EOF && block != 0x3B;) {
    if (block == 0x21) {  // an extension: its label, then its sub-blocks
      if (std::fgetc(file) == EOF || !skip_gif_blocks(file)) return;
    } else if (block == 0x2C) {  // an image: its descriptor, colour table, LZW code size, data
      unsigned char descriptor[9];
      if (std::fread(descriptor, 1, 9, file) != 9) return;
      ++s.gif_frames;
      if (std::fseek(file, table_bytes(descriptor[8]) + 1, SEEK_CUR) != 0 || !skip_gif_blocks(file))
        return;
    } else {
      return;  // not a GIF block: stb_image says what it makes of it
    }
  }
}

FileStructure read_structure(std::FILE* file) {
  FileStructure s;
  unsigned char signature[8] = {};
  const size_t n = std::fread(signature, 1, 8, file);
  static const unsigned char png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (n == 8 && std::memcmp(signature, png, 8) == 0) {
    s.png = true;
    read_png_chunks(file, s);
  } else if (n >= 6 && (std::memcmp(signature, "GIF87a", 6) == 0 ||
                        std::memcmp(signature, "GIF89a", 6) == 0)) {
    std::fseek(file, 6, SEEK_SET);
    read_gif_frames(file, s);
  }
  std::rewind(file);
  return s;
}

[[noreturn]] void fail_to_decode(const std::string& path, const FileStructure& s) {
  const char* stb = stbi_failure_reason();
  std::string why = stb != nullptr ? stb : "";
  if (s.png && !s.png_end)
    why = "the PNG ends before its IEND chunk (a truncated file?)" +
          (why.empty() ? std::string() : "; " + why);
  else if (s.png && !s.bad_crc.empty())
    why = "the PNG's " + s.bad_crc + " chunk fails its CRC-32 (a damaged file?)" +
          (why.empty() ? std::string() : "; " + why);
  if (why.empty()) why = "no reason given by stb_image";
  throw Error(path + ": cannot decode image: " + why +
              " (not a valid PNG/JPEG/BMP/GIF/TGA/PNM file?)");
}

// What the file's structure says that a decoded image hides: a note each, on stderr.
void note_structure(const std::string& path, const FileStructure& s) {
  if (s.png && !s.bad_crc.empty())
    std::fprintf(stderr, "note: %s: the PNG's %s chunk fails its CRC-32 (a damaged file?)\n",
                 path.c_str(), s.bad_crc.c_str());
  if (s.png && !s.png_end)
    std::fprintf(stderr, "note: %s: the PNG ends before its IEND chunk (a truncated file?)\n",
                 path.c_str());
  if (s.gif_frames > 1)
    std::fprintf(stderr, "note: %s: an animated GIF of %d frames; only the first is read\n",
                 path.c_str(), s.gif_frames);
}

// Throws the error for an image of `w`×`h` beyond kMaxImagePixels.
void check_pixels(const std::string& path, uint64_t w, uint64_t h) {
  const uint64_t pixels = w * h;  // each below 2^32: no overflow
  if (pixels > kMaxImagePixels)
    throw Error(path + ": the image is " + std::to_string(w) + "x" + std::to_string(h) + " (" +
                std::to_string(pixels) + " pixels), more than the " +
                std::to_string(kMaxImagePixels) + " pixels (" +
                std::to_string(kMaxImagePixels >> 20) +
                " megapixels) an input image may have; scale it down first");
}

// The dimensions from the header (stbi_info; a PNG's IHDR first, which stb_image does not name
// when it is too large), checked before anything is decoded: a small compressed file can claim a
// huge image.
void check_image_size(const std::string& path, std::FILE* file, const FileStructure& s) {
  if (s.png && s.width > 0) check_pixels(path, s.width, s.height);
  int w = 0, h = 0, channels = 0;
  if (!stbi_info_from_file(file, &w, &h, &channels)) fail_to_decode(path, s);
  check_pixels(path, uint64_t(w), uint64_t(h));
  const uint64_t pixels = uint64_t(w) * uint64_t(h);
  const std::string size = std::to_string(w) + "x" + std::to_string(h);
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
  const FileStructure structure = read_structure(file.get());
  check_image_size(path, file.get(), structure);
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load_from_file(file.get(), &w, &h, &channels, 0), &stbi_image_free);
  if (!pixels) fail_to_decode(path, structure);
  note_structure(path, structure);
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
