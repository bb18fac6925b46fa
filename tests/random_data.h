// Random inputs shared by the engine and model suites: fresh values per case, never zeros.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

inline std::vector<float> random_values(std::mt19937_64& rng, size_t n, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

inline std::vector<int32_t> random_labels(std::mt19937_64& rng, int n, int classes) {
  std::uniform_int_distribution<int> d(0, classes - 1);
  std::vector<int32_t> v(n);
  for (auto& y : v) y = d(rng);
  return v;
}
