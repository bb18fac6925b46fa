// Gemm/Correctness: every variant × layout against ref_gemm, through batches of cases
// (gemm_harness.h). The kinds are defined in gemm_shapes_test.cpp (EdgeShapes, LeadingDims,
// Misaligned, RandomShapes) and gemm_arithmetic_test.cpp (AlphaBeta, Epilogues, Deterministic,
// WideRange),
// which registers them all.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "gemm_harness.h"
#include "gpu_test.h"
#include "kernels/gemm.h"
#include "variant_test.h"

namespace gemm_test {

using gemm::Op;

// The host variant runs in CI on 2 cores: cases above this many FMAs (784³, 1025³) are left to
// the device variants. The MLP's shapes (≈2·10^8) stay in.
constexpr double kHostMaxFma = 2.2e8;

inline int random_case_count() {
  const char* v = std::getenv("GEMM_TEST_RANDOM_CASES");
  if (v && *v) return std::max(1, std::atoi(v));
  return 300;
}

// A stable seed per (test kind, layout, case): the same case gets the same data in every variant
// and every run, and each case gets its own.
inline std::uint64_t seed_for(const std::string& kind, Op op_a, Op op_b, std::size_t index) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char ch : kind + gemm::layout_name(op_a, op_b))
    h = (h ^ std::uint8_t(ch)) * 1099511628211ull;
  return h ^ (0x9E3779B97F4A7C15ull * (index + 1));
}

struct Param {
  std::string variant;
  Op op_a, op_b;
};

inline std::vector<Param> correctness_params() {
  std::vector<Param> out;
  for (const gemm::Variant& v : gemm::variants())
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::T}) out.push_back({v.name, a, b});
  return out;
}

class Correctness : public Parameterised<Param, Correctness> {
 public:
  void EdgeShapes();
  void LeadingDims();
  void Misaligned();
  void AlphaBeta();
  void RandomShapes();
  void Deterministic();
  void Epilogues();
  void WideRange();

 protected:
  const gemm::Variant& variant() const { return gemm::find_variant(GetParam().variant); }
  bool on_host() const { return variant().device == gemm::Device::CPU; }

  Case base() const {
    Case c;
    c.op_a = GetParam().op_a;
    c.op_b = GetParam().op_b;
    return c;
  }

  // Drops what the host variant should not spend CI time on, numbers the seeds, runs, checks.
  void run_cases(const std::string& kind, std::vector<Case> cases) {
    std::vector<Case> kept;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      Case c = cases[i];
      c.seed = seed_for(kind, c.op_a, c.op_b, i);
      if (on_host() && c.fma_count() > kHostMaxFma) continue;
      kept.push_back(c);
    }
    ASSERT_FALSE(kept.empty());
    const Batch batch(std::move(kept));
    const std::vector<std::string> failures = run_and_check(variant(), batch);
    const std::size_t shown = std::min<std::size_t>(failures.size(), 8);
    for (std::size_t i = 0; i < shown; ++i) ADD_FAILURE() << failures[i];
    EXPECT_TRUE(failures.empty()) << failures.size() << " of " << batch.cases().size()
                                  << " cases failed for variant '" << variant().name << "' ("
                                  << shown << " shown above)";
    RecordProperty("cases", int(batch.cases().size()));
  }

  void SetUp() override {
    if (!on_host()) VARIANT_TEST_OR_SKIP(variant());
  }
};

struct Shape {
  int m, n, k;
};

}  // namespace gemm_test
