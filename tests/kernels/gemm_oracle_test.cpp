// The dispatch table (GemmDispatch.*), the oracle and the checker (GemmReference.*), and the
// reach of the tolerances (GemmTolerance.*). No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gemm_harness.h"
#include "kernels/gemm.h"
#include "ref_gemm.h"

namespace gemm_test {
namespace {

using gemm::Op;

const double kTolFp32 = gemm::tolerance(gemm::Precision::FP32);
const double kTolTf32 = gemm::tolerance(gemm::Precision::TF32);

// ---------------------------------------------------------------------------------------------
// The dispatch table.

TEST(GemmDispatch, UnknownVariantListsKnownNames) {
  try {
    gemm::find_variant("no_such_kernel");
    FAIL() << "no gemm::Error for an unknown variant";
  } catch (const gemm::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("no_such_kernel"), std::string::npos) << msg;
    for (const gemm::Variant& v : gemm::variants())
      EXPECT_NE(msg.find(v.name), std::string::npos)
          << "message does not list " << v.name << ": " << msg;
  }
  gemm::Problem p;  // the name is checked before anything else
  EXPECT_THROW(gemm::run(std::string("no_such_kernel"), p), gemm::Error);
}

TEST(GemmDispatch, VariantTableIsSane) {
  const auto& vs = gemm::variants();
  ASSERT_FALSE(vs.empty());
  std::vector<std::string> names;
  for (const gemm::Variant& v : vs) {
    ASSERT_NE(v.name, nullptr);
    EXPECT_NE(std::string(v.name), "");
    EXPECT_NE(v.summary, nullptr);
    if (v.summary) {
      EXPECT_NE(std::string(v.summary), "") << v.name;
    }
    EXPECT_NE(v.launch, nullptr) << v.name;
    EXPECT_EQ(&gemm::find_variant(v.name), &v) << v.name;
    names.push_back(v.name);
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end())
      << "duplicate variant name";
  for (const char* needed : {"cpu", "cublas", "naive"})
    EXPECT_NE(std::find(names.begin(), names.end(), needed), names.end()) << needed;
  EXPECT_EQ(gemm::layout_name(Op::T, Op::N), "TN");
}

// ---------------------------------------------------------------------------------------------
// The oracle and the checker themselves.

TEST(GemmReference, HandComputedInEveryLayout) {
  // op(A) = [[1,-2,3],[4,5,-6]] (2×3), op(B) = [[7,8],[9,10],[11,12]] (3×2).
  const float a_n[] = {1, -2, 3, 4, 5, -6}, a_t[] = {1, 4, -2, 5, 3, -6};
  const float b_n[] = {7, 8, 9, 10, 11, 12}, b_t[] = {7, 9, 11, 8, 10, 12};
  const double want_dot[] = {22, 24, 7, 10}, want_abs[] = {58, 64, 139, 154};
  for (Op op_a : {Op::N, Op::T})
    for (Op op_b : {Op::N, Op::T}) {
      std::vector<double> dot, abs_sum;
      ref_gemm(op_a, op_b, 2, 2, 3, op_a == Op::N ? a_n : a_t, op_a == Op::N ? 3 : 2,
               op_b == Op::N ? b_n : b_t, op_b == Op::N ? 2 : 3, dot, abs_sum);
      for (int e = 0; e < 4; ++e) {
        EXPECT_EQ(dot[e], want_dot[e]) << gemm::layout_name(op_a, op_b) << " element " << e;
        EXPECT_EQ(abs_sum[e], want_abs[e]) << gemm::layout_name(op_a, op_b) << " element " << e;
      }
    }
}

// A fake variant that computes the right answer through the oracle, then spoils it in one of
// several ways; the checker must pass the honest run and catch every spoiled one.
enum class Spoil { None, OffByTol, NaN, Inf, PaddingWrite, GuardWrite, Skip };
Spoil g_spoil = Spoil::None;

void launch_fake(const gemm::Problem& p, cudaStream_t) {
  std::vector<double> dot, abs_sum;
  ref_gemm(p.op_a, p.op_b, p.m, p.n, p.k, p.a, p.lda, p.b, p.ldb, dot, abs_sum);
  for (int i = 0; i < p.m; ++i)
    for (int j = 0; j < p.n; ++j) {
      float& c = p.c[std::size_t(i) * p.ldc + j];
      const double c0 = p.beta == 0.0f ? 0.0 : c;
      c = float(p.alpha * dot[std::size_t(i) * p.n + j] + p.beta * c0);
    }
  float& last = p.c[std::size_t(p.m - 1) * p.ldc + p.n - 1];
  switch (g_spoil) {
    case Spoil::None:
      break;
    case Spoil::OffByTol:
      last += float(3e-5 * abs_sum.back() + 1e-3);
      break;
    case Spoil::NaN:
      last = std::nanf("");
      break;
    case Spoil::Inf:
      last = INFINITY;
      break;
    case Spoil::PaddingWrite:
      p.c[std::size_t(p.m - 1) * p.ldc + p.n] = 0.0f;
      break;
    case Spoil::GuardWrite:
      p.c[-1] = 0.0f;
      break;
    case Spoil::Skip:
      last = std::nanf("");
      p.c[0] = std::nanf("");
      break;
  }
}

TEST(GemmReference, CheckerCatchesWrongResults) {
  const gemm::Variant fake{"fake", gemm::Device::CPU, gemm::Precision::FP32, "test", launch_fake};
  Case c{Op::T, Op::T, 13, 11, 9};
  c.ldc = 14;  // padding after each row
  c.off_c = 1;
  c.alpha = 0.5f;
  c.beta = -1.5f;
  c.seed = 42;
  const Batch batch({c});
  const std::pair<Spoil, const char*> spoils[] = {{Spoil::OffByTol, "out of bound"},
                                                  {Spoil::NaN, "got nan"},
                                                  {Spoil::Inf, "got inf"},
                                                  {Spoil::PaddingWrite, "ldc padding"},
                                                  {Spoil::GuardWrite, "guard before"},
                                                  {Spoil::Skip, "2 of 143"}};
  g_spoil = Spoil::None;
  auto failures = run_and_check(fake, batch);
  EXPECT_TRUE(failures.empty()) << failures[0];
  for (const auto& [spoil, needle] : spoils) {
    g_spoil = spoil;
    failures = run_and_check(fake, batch);
    ASSERT_EQ(failures.size(), 1u) << needle;
    EXPECT_NE(failures[0].find(needle), std::string::npos) << failures[0];
  }
  g_spoil = Spoil::None;
}

// ---------------------------------------------------------------------------------------------
// The tolerances are reachable (see gemm_harness.h): the worst element of a sequential K = 4096
// dot product in fp32, and with TF32-rounded inputs, relative to Σ|a·b|, over 64×64 elements.

double worst_relative_error(int k, float (*round_input)(float)) {
  const int m = 64, n = 64;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(std::size_t(m) * k), b(std::size_t(k) * n);
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);
  std::vector<double> dot, abs_sum;
  ref_gemm(Op::N, Op::N, m, n, k, a.data(), k, b.data(), n, dot, abs_sum);
  double worst = 0.0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int kk = 0; kk < k; ++kk)
        acc += round_input(a[std::size_t(i) * k + kk]) * round_input(b[std::size_t(kk) * n + j]);
      const std::size_t e = std::size_t(i) * n + j;
      worst = std::max(worst, std::fabs(acc - dot[e]) / abs_sum[e]);
    }
  return worst;
}

float as_is(float x) { return x; }
float tf32_truncate(float x) {  // the cruder of the two TF32 conversions: drop 13 mantissa bits
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  u &= 0xFFFFE000u;
  std::memcpy(&x, &u, sizeof u);
  return x;
}

TEST(GemmTolerance, Fp32SequentialSumAtK4096FitsBound) {
  const double worst = worst_relative_error(4096, as_is);
  RecordProperty("worst_relative_error", std::to_string(worst));
  std::printf("fp32, K = 4096: worst |c - ref| / sum|a*b| = %.3g (tolerance %.0e)\n", worst,
              kTolFp32);
  EXPECT_LT(worst, kTolFp32 / 10) << "less than 10x margin to the fp32 tolerance";
}

TEST(GemmTolerance, Tf32TruncatedInputsAtK4096FitBound) {
  const double worst = worst_relative_error(4096, tf32_truncate);
  std::printf("tf32 (truncated), K = 4096: worst |c - ref| / sum|a*b| = %.3g (tolerance %.0e)\n",
              worst, kTolTf32);
  EXPECT_LT(worst, kTolTf32 / 2);
}

}  // namespace
}  // namespace gemm_test
