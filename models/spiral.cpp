#include "models/spiral.h"

#include <cmath>
#include <random>

namespace models {

SpiralData make_spiral(int per_class, int classes, float noise, uint64_t seed) {
  if (per_class < 1 || classes < 2)
    throw gemm_mlp::Error("make_spiral: needs per_class >= 1 and classes >= 2");
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> jitter(0.0f, noise);
  SpiralData d;
  d.count = per_class * classes;
  d.classes = classes;
  const float two_pi = 6.28318530718f;
  for (int c = 0; c < classes; ++c) {
    for (int i = 0; i < per_class; ++i) {
      const float r = static_cast<float>(i) / static_cast<float>(per_class);  // 0 .. 1
      // Each arm turns once as r goes out, offset by its share of the circle.
      const float angle = two_pi * (static_cast<float>(c) / classes + r) + jitter(rng);
      d.points.push_back(r * std::cos(angle));
      d.points.push_back(r * std::sin(angle));
      d.labels.push_back(c);
    }
  }
  return d;
}

SpiralClassifier::SpiralClassifier(engine::Context& ctx, int classes, int hidden) {
  add<engine::Linear>(ctx, 2, hidden);
  add<engine::ReLU>();
  add<engine::Linear>(ctx, hidden, hidden);
  add<engine::ReLU>();
  add<engine::Linear>(ctx, hidden, classes);
}

}  // namespace models
