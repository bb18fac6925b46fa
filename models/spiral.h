// A second toy model on the engine: classifying the points of interleaved 2-D spirals (the
// classic CS231n example), which no linear model can separate.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/engine.h"

namespace models {

struct SpiralData {
  int count = 0, classes = 0;
  std::vector<float> points;    // count × 2 (x, y), row-major
  std::vector<int32_t> labels;  // count, the arm each point lies on
};

// `classes` spiral arms of `per_class` points each, radius 0..1, with Gaussian angle noise of
// standard deviation `noise` (radians). Deterministic for a seed on a given standard library.
SpiralData make_spiral(int per_class, int classes, float noise, uint64_t seed);

// 2 → hidden → ReLU → hidden → ReLU → classes.
class SpiralClassifier : public engine::Sequential {
 public:
  SpiralClassifier(engine::Context& ctx, int classes, int hidden = 64);
};

}  // namespace models
