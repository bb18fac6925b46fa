// The CUDA backend against the CPU backend: the comparison and the variants it runs over, shared
// by the engine and model suites.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <exception>
#include <string>
#include <vector>

#include "kernels/gemm.h"

// max |got − ref| ≤ tol · max |ref|: a normwise bound, loose enough for TF32's 10-bit inputs
// (tol 2e-2) and tight for fp32 (tol 1e-5 would do for one GEMM; 1e-4 leaves room for the
// different summation orders of OpenBLAS and the kernels). NaN never passes.
inline void expect_close(const std::vector<float>& got, const std::vector<float>& ref, double tol,
                         const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  double scale = 0.0, worst = 0.0;
  for (float r : ref) scale = std::max(scale, static_cast<double>(std::fabs(r)));
  size_t worst_i = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_FALSE(std::isnan(got[i])) << what << "[" << i << "] is NaN";
    const double d = std::fabs(static_cast<double>(got[i]) - ref[i]);
    if (d > worst) worst = d, worst_i = i;
  }
  EXPECT_LE(worst, tol * scale + 1e-7)
      << what << ": worst at [" << worst_i << "] got " << got[worst_i] << ", ref " << ref[worst_i]
      << " (max |ref| " << scale << ")";
}

// The tolerance of expect_close for results computed with `v`.
inline double tolerance_against_cpu(const gemm::Variant& v) {
  return v.precision == gemm::Precision::TF32 ? 2e-2 : 1e-4;
}

// Runs `body` for one variant; an exception fails that variant and the loop goes on to the next.
template <class Body>
void for_variant(const gemm::Variant& v, Body&& body) {
  SCOPED_TRACE(v.name);
  try {
    body();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "variant " << v.name << " threw: " << e.what();
  }
}

// The device variants this GPU runs (all of them on the H200; wgmma needs Hopper).
inline std::vector<const gemm::Variant*> device_variants() {
  std::vector<const gemm::Variant*> out;
  for (const gemm::Variant& v : gemm::variants())
    if (v.device == gemm::Device::CUDA && !gemm::unavailable_reason(v)) out.push_back(&v);
  return out;
}
