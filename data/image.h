// One image file (PNG, JPEG, PGM, BMP, … anything stb_image reads) as a network input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace data {

// The most pixels (width × height) an input image may have: 64 megapixels, e.g. 8192×8192, more
// than a camera photo of a digit needs. Checked from the file's header before decoding.
constexpr uint64_t kMaxImagePixels = uint64_t{1} << 26;

// Returns rows·cols floats, row-major, normalised like the MNIST dataset (data/mnist.h).
// The image is converted to grayscale (colour by luma, transparent pixels count as black),
// resized to rows × cols with stb_image_resize (per axis: a box filter, i.e. area averaging,
// when shrinking; a triangle filter, i.e. bilinear, when enlarging; edges clamped) and
// normalised. No inversion: the caller gives a light digit on a dark background, as in MNIST.
// Throws gemm_mlp::Error naming the file when it is missing or cannot be decoded, when it has
// more than kMaxImagePixels pixels or needs more than the host memory available to decode
// (base/memory_limit.h), or when rows or cols is not positive.
std::vector<float> load_digit_image(const std::string& path, int rows, int cols);

// How the digit is drawn: Auto decides by the image's border (a light border is paper, so the
// digit is dark on light and gets inverted).
enum class Polarity { Auto, LightOnDark, DarkOnLight };

// A digit photographed or drawn anywhere in an image, prepared as MNIST's digits were: grayscale,
// inverted when dark on light, cropped to the ink's bounding box (pixels above a quarter of the
// brightest), scaled so that its longer side fills 20/28 of the output, centred by its centre of
// mass in rows × cols, and normalised. Same errors as load_digit_image.
std::vector<float> load_digit_like_mnist(const std::string& path, int rows, int cols,
                                         Polarity polarity = Polarity::Auto);

}  // namespace data
