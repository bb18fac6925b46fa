#include "data/image.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <future>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

#include "data/mnist.h"
#include "test_files.h"

namespace {

using data::load_digit_image;
using data_test::Bytes;
using data_test::error_of;
using data_test::expect_mentions;
using data_test::TempDir;

// Writes a w×h PNG with `channels` interleaved channels per pixel.
std::string write_png(const TempDir& dir, const std::string& name, int w, int h, int channels,
                      const Bytes& pixels) {
  const std::string path = dir.file(name);
  EXPECT_EQ(pixels.size(), static_cast<size_t>(w) * h * channels);
  EXPECT_NE(stbi_write_png(path.c_str(), w, h, channels, pixels.data(), w * channels), 0);
  return path;
}

// Expected normalised values for 0..255 inputs.
std::vector<float> normalised(const std::vector<float>& values) {
  std::vector<float> out;
  for (float v : values) out.push_back(data::normalise_pixel(v));
  return out;
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << "at " << i;
}

TEST(Image, GrayscaleSameSizeIsNormalisedOnly) {
  TempDir dir;
  const std::string path = write_png(dir, "digit.png", 3, 2, 1, {0, 255, 128, 10, 20, 30});
  expect_near_all(load_digit_image(path, 2, 3), normalised({0, 255, 128, 10, 20, 30}));
}

TEST(Image, ColourUsesLumaAndAlphaOverBlack) {
  TempDir dir;
  const std::string rgb = write_png(dir, "rgb.png", 2, 1, 3, {255, 0, 0, 255, 255, 255});
  expect_near_all(load_digit_image(rgb, 1, 2), normalised({0.299f * 255, 255}));
  // Transparent pixels are black whatever their colour; half alpha halves the brightness.
  const std::string rgba = write_png(dir, "rgba.png", 3, 1, 4,
                                     {255, 255, 255, 0, 255, 255, 255, 255, 200, 200, 200, 51});
  expect_near_all(load_digit_image(rgba, 1, 3), normalised({0, 255, 200 * 0.2f}));
  const std::string gray_alpha = write_png(dir, "ga.png", 1, 1, 2, {100, 255});
  expect_near_all(load_digit_image(gray_alpha, 1, 1), normalised({100}));
}

TEST(Image, ShrinksByAreaAveraging) {
  TempDir dir;
  // 4×4 of four 2×2 blocks; each output pixel is its block's mean.
  const std::string path = write_png(dir, "big.png", 4, 4, 1,
                                     {0, 0, 100, 200,      //
                                      0, 40, 100, 200,     //
                                      255, 255, 8, 16,     //
                                      255, 255, 24, 32});  //
  expect_near_all(load_digit_image(path, 2, 2), normalised({10, 150, 255, 20}));
  // 3 → 2 columns: each output covers 1.5 source pixels.
  const std::string odd = write_png(dir, "odd.png", 3, 1, 1, {30, 60, 90});
  expect_near_all(load_digit_image(odd, 1, 2),
                  normalised({(30 + 0.5f * 60) / 1.5f, (0.5f * 60 + 90) / 1.5f}));
}

TEST(Image, EnlargesBilinearly) {
  TempDir dir;
  const std::string path = write_png(dir, "small.png", 2, 1, 1, {0, 255});
  // Output centres map to source x = -0.25 (clamped), 0.25, 0.75, 1.25 (clamped).
  expect_near_all(load_digit_image(path, 1, 4), normalised({0, 63.75f, 191.25f, 255}));
  const std::string one = write_png(dir, "one.png", 1, 1, 1, {77});
  expect_near_all(load_digit_image(one, 3, 3), normalised(std::vector<float>(9, 77)));
}

TEST(Image, MnistSizeFromLargerImage) {
  TempDir dir;
  const std::string path = write_png(dir, "photo.png", 100, 80, 1, Bytes(8000, 255));
  const std::vector<float> v = load_digit_image(path, 28, 28);
  expect_near_all(v, normalised(std::vector<float>(784, 255)));
}

TEST(Image, ReportsMissingAndCorruptFiles) {
  TempDir dir;
  const std::string missing = dir.file("missing.png");
  expect_mentions(error_of([&] { load_digit_image(missing, 28, 28); }),
                  {missing, "cannot open", "No such file or directory"});
  const std::string corrupt = dir.file("corrupt.png");
  data_test::write_file(corrupt, Bytes{'n', 'o', 't', ' ', 'a', 'n', ' ', 'i', 'm', 'a', 'g', 'e'});
  expect_mentions(error_of([&] { load_digit_image(corrupt, 28, 28); }),
                  {corrupt, "cannot decode image"});
  // A real PNG cut short.
  const std::string good = write_png(dir, "good.png", 8, 8, 1, Bytes(64, 9));
  Bytes cut = data_test::read_file(good);
  cut.resize(cut.size() / 2);
  data_test::write_file(corrupt, cut);
  expect_mentions(error_of([&] { load_digit_image(corrupt, 28, 28); }),
                  {corrupt, "cannot decode image"});
}

// A FIFO would block the open until a writer came; a directory is no image either. Both are
// refused at once (the FIFO is opened for writing after 5 s, to end a wait that should not be).
TEST(Image, RefusesAFifoAndADirectoryWithoutWaiting) {
  TempDir dir;
  const std::string fifo = dir.file("pipe.png");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto read = std::async(std::launch::async,
                         [&] { return error_of([&] { load_digit_image(fifo, 28, 28); }); });
  if (read.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    ADD_FAILURE() << "reading a FIFO waited for a writer";
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
  }
  expect_mentions(read.get(), {fifo, "is a FIFO (named pipe), not an image file"});
  expect_mentions(error_of([&] { load_digit_image(dir.str(), 28, 28); }),
                  {dir.str(), "is a directory, not an image file"});
}

// A PNG whose header (IHDR) claims w×h: stb_image reads the size before the data and does not
// check chunk CRCs, so an 8×8 PNG with its size patched is a small file claiming a huge image.
std::string write_png_claiming(const TempDir& dir, uint32_t w, uint32_t h) {
  Bytes png = data_test::read_file(write_png(dir, "small.png", 8, 8, 1, Bytes(64, 9)));
  for (int i = 0; i < 4; ++i) {
    png[16 + i] = static_cast<uint8_t>(w >> (24 - 8 * i));  // IHDR width
    png[20 + i] = static_cast<uint8_t>(h >> (24 - 8 * i));  // IHDR height
  }
  const std::string path = dir.file("claims.png");
  data_test::write_file(path, png);
  return path;
}

TEST(Image, RefusesMoreThanTheLimitOfPixelsBeforeDecoding) {
  TempDir dir;
  const std::string huge = write_png_claiming(dir, 20000, 20000);
  expect_mentions(
      error_of([&] { load_digit_image(huge, 28, 28); }),
      {huge, "20000x20000 (400000000 pixels)", "more than the 67108864 pixels", "64 megapixels"});
  expect_mentions(error_of([&] { data::load_digit_like_mnist(huge, 28, 28); }),
                  {huge, "20000x20000"});
  // One row over the limit is refused; at the limit, the (patched) data is what fails.
  expect_mentions(error_of([&] { load_digit_image(write_png_claiming(dir, 8192, 8193), 28, 28); }),
                  {"8192x8193", "more than the 67108864 pixels"});
  const std::string at_limit = write_png_claiming(dir, 8192, 8192);
  const std::string error = error_of([&] { load_digit_image(at_limit, 28, 28); });
  expect_mentions(error, {at_limit, "cannot decode image"});
  EXPECT_EQ(error.find("more than the"), std::string::npos) << error;
}

// A PNG too large for stb_image to read its size (it calls it an "unknown image type") is named by
// its IHDR's size and the limit.
TEST(Image, NamesTheSizeOfAPngTooLargeForStbImage) {
  TempDir dir;
  const std::string huge = write_png_claiming(dir, 100000, 100000);
  const std::string error = error_of([&] { load_digit_image(huge, 28, 28); });
  expect_mentions(error, {huge,
                          "the image is 100000x100000 (10000000000 pixels), more than the "
                          "67108864 pixels"});
  EXPECT_EQ(error.find("unknown image type"), std::string::npos) << error;
}

// What stb_image passes over without a word: a PNG cut before its IEND chunk is an error saying
// so (not an empty reason); a chunk whose CRC-32 fails, and a GIF's frames after the first, are a
// note each when the image decodes.
TEST(Image, NamesWhatStbImagePassesOver) {
  TempDir dir;
  const std::string good = write_png(dir, "good.png", 8, 8, 1, Bytes(64, 9));
  Bytes png = data_test::read_file(good);
  const std::string cut = dir.file("no_iend.png");
  data_test::write_file(cut, Bytes(png.begin(), png.end() - 12));  // IEND: 12 bytes
  testing::internal::CaptureStderr();
  const std::string error = error_of([&] { load_digit_image(cut, 28, 28); });
  const std::string cut_notes = testing::internal::GetCapturedStderr();
  if (error.empty())  // decoded: a note instead
    EXPECT_NE(cut_notes.find("the PNG ends before its IEND chunk"), std::string::npos) << cut_notes;
  else
    expect_mentions(error, {cut, "cannot decode image: the PNG ends before its IEND chunk"});

  png[png.size() - 12 - 1] ^= 0xFF;  // the CRC-32 of the chunk before IEND (IDAT)
  const std::string damaged = dir.file("bad_crc.png");
  data_test::write_file(damaged, png);
  testing::internal::CaptureStderr();
  EXPECT_EQ(load_digit_image(damaged, 8, 8), load_digit_image(good, 8, 8));
  const std::string notes = testing::internal::GetCapturedStderr();
  EXPECT_NE(notes.find("note: " + damaged + ": the PNG's IDAT chunk fails its CRC-32"),
            std::string::npos)
      << notes;
  testing::internal::CaptureStderr();
  load_digit_image(good, 8, 8);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");

  // A 1x1 GIF of two black frames: the first is read, and the count is named.
  const Bytes frame = {0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0x02, 0x02, 0x44, 0x01, 0x00};
  Bytes gif = {'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 255, 255, 255};
  gif.insert(gif.end(), frame.begin(), frame.end());
  const std::string still = dir.file("still.gif");
  Bytes one = gif;
  one.push_back(0x3B);
  data_test::write_file(still, one);
  gif.insert(gif.end(), frame.begin(), frame.end());
  gif.push_back(0x3B);
  const std::string animated = dir.file("animated.gif");
  data_test::write_file(animated, gif);
  testing::internal::CaptureStderr();
  expect_near_all(load_digit_image(animated, 1, 1), normalised({0}));
  const std::string gif_notes = testing::internal::GetCapturedStderr();
  EXPECT_NE(
      gif_notes.find("note: " + animated + ": an animated GIF of 2 frames; only the first is read"),
      std::string::npos)
      << gif_notes;
  testing::internal::CaptureStderr();
  expect_near_all(load_digit_image(still, 1, 1), normalised({0}));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(Image, RefusesAnImageBeyondTheMemoryLimitBeforeDecoding) {
  TempDir dir;
  const std::string path = write_png_claiming(dir, 1000, 1000);  // 5 MB as bytes and floats
  ::setenv("GEMM_MLP_MEMORY_LIMIT", "1M", 1);
  const std::string error = error_of([&] { load_digit_image(path, 28, 28); });
  ::unsetenv("GEMM_MLP_MEMORY_LIMIT");
  expect_mentions(error, {path, "decoding the 1000x1000 image needs", "more than the 1.0 MiB",
                          "GEMM_MLP_MEMORY_LIMIT"});
}

TEST(Image, RejectsNonPositiveSize) {
  TempDir dir;
  const std::string path = write_png(dir, "d.png", 1, 1, 1, {1});
  expect_mentions(error_of([&] { load_digit_image(path, 0, 28); }), {path, "0x28", "positive"});
  expect_mentions(error_of([&] { load_digit_image(path, 28, -1); }), {path, "28x-1"});
}

// A 60×40 picture of a "digit" (a 10×20 bar, off centre), dark on light or light on dark, as a
// phone photo or a drawing would give it.
std::string write_bar(const TempDir& dir, const std::string& name, bool dark_on_light) {
  const int w = 60, h = 40;
  Bytes px(static_cast<size_t>(w) * h, dark_on_light ? 250 : 5);
  for (int y = 5; y < 25; ++y)
    for (int x = 40; x < 50; ++x) px[static_cast<size_t>(y) * w + x] = dark_on_light ? 10 : 245;
  return write_png(dir, name, w, h, 1, px);
}

// Where the ink of a prepared 28×28 digit lies: its bounding box and centre of mass.
struct Ink {
  int width = 0, height = 0;
  double cx = 0, cy = 0;
};

Ink ink_of(const std::vector<float>& digit) {
  const float background = data::normalise_pixel(0);
  int top = 28, bottom = -1, left = 28, right = -1;
  double mass = 0, mx = 0, my = 0;
  for (int y = 0; y < 28; ++y)
    for (int x = 0; x < 28; ++x) {
      const float v = digit[y * 28 + x] - background;
      if (v > 0.5f)
        top = std::min(top, y), bottom = std::max(bottom, y), left = std::min(left, x),
        right = std::max(right, x);
      mass += v, mx += v * (x + 0.5), my += v * (y + 0.5);
    }
  return {right - left + 1, bottom - top + 1, mx / mass, my / mass};
}

TEST(Image, MnistPreparationCropsScalesAndCentres) {
  TempDir dir;
  const std::vector<float> light =
      data::load_digit_like_mnist(write_bar(dir, "l.png", false), 28, 28);
  const std::vector<float> dark =
      data::load_digit_like_mnist(write_bar(dir, "d.png", true), 28, 28);
  // Auto polarity: the dark-on-light picture is inverted, so both give nearly the same digit.
  ASSERT_EQ(light.size(), 784u);
  for (size_t i = 0; i < light.size(); ++i) EXPECT_NEAR(light[i], dark[i], 0.1) << "at " << i;
  // The bar, 20 rows tall (the longer side fills 20 of 28) and 10 wide, centred.
  const Ink ink = ink_of(light);
  EXPECT_EQ(ink.height, 20);
  EXPECT_EQ(ink.width, 10);
  EXPECT_NEAR(ink.cx, 14.0, 0.6);
  EXPECT_NEAR(ink.cy, 14.0, 0.6);
  // Forced the wrong way, the light paper is the ink: the whole 60×40 picture, 20 wide, 13 tall.
  const Ink paper = ink_of(data::load_digit_like_mnist(write_bar(dir, "d2.png", true), 28, 28,
                                                       data::Polarity::LightOnDark));
  EXPECT_EQ(paper.width, 20);
  EXPECT_EQ(paper.height, 13);
}

}  // namespace
