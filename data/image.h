// One image file (PNG, JPEG, BMP, … anything stb_image reads) as a network input.
#pragma once

#include <string>
#include <vector>

namespace data {

// Returns rows·cols floats, row-major, normalised like the MNIST dataset (data/mnist.h).
// The image is converted to grayscale (colour by luma, transparent pixels count as black),
// resized to rows × cols (area averaging when shrinking, bilinear when enlarging, each axis on
// its own) and normalised. The caller must give a white (or light) digit on a black background,
// as in MNIST: a dark digit on white paper must be inverted first, or it reads as noise.
// Throws data::Error naming the file when it is missing or cannot be decoded, or when rows or
// cols is not positive.
std::vector<float> load_digit_image(const std::string& path, int rows, int cols);

}  // namespace data
