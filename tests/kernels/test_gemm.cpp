// Correctness of every variant in gemm::variants() against ref_gemm (a plain double-precision
// oracle), in every layout, and the errors of malformed calls.
//
// Test names, as ctest lists them:
//   Gemm/Correctness.<Kind>/<variant>_<layout>   Kind: EdgeShapes, LeadingDims, Misaligned,
//                                                AlphaBeta, RandomShapes, Deterministic,
//                                                Epilogues (bias, bias_relu, relu_mask)
//   Gemm/Malformed.<Kind>/<variant>              validation errors (no GPU needed)
//   Gemm/DevicePointers.HostPointerRejected/<device variant>
//   GemmReference.*, GemmTolerance.*, GemmDispatch.*   the oracle, the tolerance, the table
// Device variants skip without a GPU (and fail with GEMM_MLP_REQUIRE_GPU=1); the host `cpu`
// variant runs everywhere, on shapes capped so that its part takes seconds on 2 cores.
//
// Environment: GEMM_TEST_RANDOM_CASES (default 300) random shapes per variant and layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gemm_harness.h"
#include "gpu_test.h"
#include "kernels/cuda_check.h"
#include "kernels/gemm.h"
#include "ref_gemm.h"

namespace {

using gemm::Op;
using gemm_test::Batch;
using gemm_test::Case;

// The host variant runs in CI on 2 cores: cases above this many FMAs (784³, 1025³) are left to
// the device variants. The MLP's shapes (≈2·10^8) stay in.
constexpr double kHostMaxFma = 2.2e8;

int random_case_count() {
  const char* v = std::getenv("GEMM_TEST_RANDOM_CASES");
  if (v && *v) return std::max(1, std::atoi(v));
  return 300;
}

// A stable seed per (test kind, layout, case): the same case gets the same data in every variant
// and every run, and each case gets its own.
std::uint64_t seed_for(const std::string& kind, Op op_a, Op op_b, std::size_t index) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char ch : kind + gemm::layout_name(op_a, op_b))
    h = (h ^ std::uint8_t(ch)) * 1099511628211ull;
  return h ^ (0x9E3779B97F4A7C15ull * (index + 1));
}

std::string safe_name(std::string s) {
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

// ---------------------------------------------------------------------------------------------
// gtest's TEST_P would give ctest names ending in "# GetParam() = …" (gtest_discover_tests keeps
// that comment when a test's parameter suffix is a name rather than an index), so the
// parameterised tests are registered by hand under the names ctest should list:
// <suite>.<Kind>/<param name>.
template <class P, class Self>
class Parameterised : public ::testing::Test {
 public:
  using Body = void (Self::*)();
  const P& GetParam() const { return param_; }
  void TestBody() override { (static_cast<Self*>(this)->*body_)(); }

  static void register_all(const char* suite,
                           const std::vector<std::pair<const char*, Body>>& bodies,
                           const std::vector<P>& params, std::string (*name)(const P&)) {
    for (const auto& [kind, body] : bodies)
      for (const P& param : params) {
        const std::string test = std::string(kind) + "/" + name(param);
        ::testing::RegisterTest(suite, test.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                                [param, body = body]() -> Self* {
                                  auto* t = new Self;
                                  t->param_ = param;
                                  t->body_ = body;
                                  return t;
                                });
      }
  }

 private:
  P param_{};
  Body body_ = nullptr;
};

// Correctness: every variant × layout.

struct Param {
  std::string variant;
  Op op_a, op_b;
};

std::vector<Param> correctness_params() {
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

 protected:
  const gemm::Variant& variant() const { return gemm::find_variant(GetParam().variant); }
  bool on_host() const { return variant().memory == gemm::Memory::Host; }

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
    const std::vector<std::string> failures = gemm_test::run_and_check(variant(), batch);
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

void Correctness::EdgeShapes() {
  const std::vector<Shape> shapes = {
      {1, 1, 1},
      {1, 300, 1},
      {1, 1025, 1},
      {300, 1, 257},
      {1025, 1, 1},
      {1, 1, 1025},
      {2, 3, 5},
      {7, 7, 7},
      {13, 13, 13},
      {31, 31, 31},
      {127, 127, 127},
      {10, 10, 10},
      {784, 784, 784},
      {1025, 1025, 1025},
      {256, 1024, 784},
      {256, 10, 1024},
      {1024, 784, 256},
      {256, 784, 1024},  // the MLP's
      {33, 33, 33},
      {65, 65, 65},
      {129, 129, 129},
      {257, 257, 257},  // past every tile
      {33, 65, 129},
      {257, 129, 65},
      {129, 257, 33},
      {17, 31, 63},
      {16, 16, 16},
      {64, 64, 64},
      {128, 128, 128},
      {64, 64, 4096},
      {7, 5, 4096},
      // Enough output tiles to fill the GPU, so that kernels choosing their tile by the number of
      // blocks (warptile, tf32, wgmma, auto) take their large-tile paths too; K small to keep
      // the reference cheap. wgmma's 256×128 tile needs the last two for 132 multiprocessors.
      {1536, 1536, 64},
      {1537, 1409, 33},
      {2048, 2048, 16},
      {2304, 2304, 16},
      {2305, 2177, 40},
  };
  std::vector<Case> cases;
  for (const Shape& s : shapes) {
    Case c = base();
    c.m = s.m, c.n = s.n, c.k = s.k;
    cases.push_back(c);
  }
  run_cases("EdgeShapes", cases);
}

void Correctness::LeadingDims() {
  const std::vector<Shape> shapes = {{7, 1, 13},     {33, 65, 17}, {64, 64, 64},
                                     {129, 31, 257}, {1, 33, 2},   {10, 784, 10}};
  const int extras[][3] = {{1, 1, 1}, {3, 3, 3}, {4, 4, 4}, {1, 4, 3},
                           {4, 3, 1}, {3, 1, 4}, {0, 0, 5}};
  std::vector<Case> cases;
  for (const Shape& s : shapes)
    for (const auto& e : extras) {
      Case c = gemm_test::finished([&] {
        Case t = base();
        t.m = s.m, t.n = s.n, t.k = s.k;
        return t;
      }());
      c.lda += e[0];
      c.ldb += e[1];
      c.ldc += e[2];
      cases.push_back(c);
    }
  run_cases("LeadingDims", cases);
}

void Correctness::Misaligned() {
  const std::vector<Shape> shapes = {{33, 65, 17},    {64, 64, 64},    {129, 31, 257}, {5, 7, 3},
                                     {256, 10, 1024}, {1537, 1409, 9}, {96, 200, 640}};
  const int offsets[][3] = {{1, 0, 0}, {0, 2, 0}, {0, 0, 3}, {1, 2, 3}, {3, 3, 3}, {2, 1, 1}};
  std::vector<Case> cases;
  for (const Shape& s : shapes)
    for (const auto& o : offsets)
      for (int ld_extra : {0, 4}) {  // +4 keeps ld % 4 == 0 with a misaligned base
        Case c = base();
        c.m = s.m, c.n = s.n, c.k = s.k;
        c = gemm_test::finished(c);
        c.lda += ld_extra, c.ldb += ld_extra, c.ldc += ld_extra;
        c.off_a = o[0], c.off_b = o[1], c.off_c = o[2];
        cases.push_back(c);
      }
  run_cases("Misaligned", cases);
}

void Correctness::AlphaBeta() {
  // {96, 200, 640}: a few output tiles and a long K, so that warptile splits K across a cluster
  // of blocks on sm_90 (8 slices of 5 K tiles) and through the workspace elsewhere.
  const std::vector<Shape> shapes = {{65, 33, 129}, {256, 10, 1024}, {1, 1, 1},     {31, 64, 7},
                                     {64, 64, 64},  {1537, 1409, 9}, {96, 200, 640}};
  const float ab[][2] = {{1, 0}, {0.5f, 0},  {2, -1.5f}, {1, 1},
                         {0, 1}, {0, -0.5f}, {0, 0},     {-1, 0.25f}};  // alpha = 0: C = beta·C
  std::vector<Case> cases;
  for (const Shape& s : shapes)
    for (const auto& x : ab) {
      Case c = base();
      c.m = s.m, c.n = s.n, c.k = s.k;
      c.alpha = x[0], c.beta = x[1];
      cases.push_back(c);
    }
  run_cases("AlphaBeta", cases);
}

void Correctness::RandomShapes() {
  std::mt19937_64 rng(seed_for("RandomShapesDraw", GetParam().op_a, GetParam().op_b, 0));
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  // Half the dimensions small, so that edges and 1-wide cases come up often; the rest up to 300.
  auto dim = [&] { return uniform(0, 1) ? uniform(1, 300) : uniform(1, 40); };
  const float alphas[] = {1.0f, 1.0f, 0.5f, -2.0f, 0.0f, 0.75f};
  const float betas[] = {0.0f, 0.0f, 0.0f, 1.0f, -1.5f, 0.3f};
  std::vector<Case> cases;
  const int count = random_case_count();
  for (int i = 0; i < count; ++i) {
    Case c = base();
    c.m = dim(), c.n = dim(), c.k = dim();
    c = gemm_test::finished(c);
    c.lda += uniform(0, 1) ? 0 : uniform(1, 5);
    c.ldb += uniform(0, 1) ? 0 : uniform(1, 5);
    c.ldc += uniform(0, 1) ? 0 : uniform(1, 5);
    c.off_a = uniform(0, 1) ? 0 : uniform(1, 3);
    c.off_b = uniform(0, 1) ? 0 : uniform(1, 3);
    c.off_c = uniform(0, 1) ? 0 : uniform(1, 3);
    c.alpha = alphas[uniform(0, 5)];
    c.beta = betas[uniform(0, 5)];
    cases.push_back(c);
  }
  run_cases("RandomShapes", cases);
}

void Correctness::Epilogues() {
  // Odd shapes, the MLP's five (split across K by 06–09, so the epilogue runs in the split-K
  // reduction or the cluster store), and the large-tile paths; each epilogue with beta 0 and 1,
  // aligned and misaligned bias and mask, tight and padded ldmask.
  const std::vector<Shape> shapes = {{1, 1, 1},        {7, 5, 4096},     {33, 65, 17},
                                     {96, 200, 640},   {256, 1024, 784}, {256, 784, 1024},
                                     {1024, 784, 256}, {256, 10, 1024},  {1537, 1409, 9}};
  std::vector<Case> cases;
  for (const Shape& s : shapes)
    for (gemm::EpilogueOp e :
         {gemm::EpilogueOp::Bias, gemm::EpilogueOp::BiasRelu, gemm::EpilogueOp::ReluMask})
      for (int variation = 0; variation < 2; ++variation) {
        Case c = base();
        c.m = s.m, c.n = s.n, c.k = s.k;
        c.epilogue = e;
        c.beta = variation == 0 ? 0.0f : 1.0f;
        c.alpha = variation == 0 ? 1.0f : 0.5f;
        c.off_bias = c.off_mask = variation;  // 0: aligned; 1: misaligned
        c.ldmask = variation == 0 ? 0 : s.n + 3;
        cases.push_back(c);
      }
  run_cases("Epilogues", cases);
}

void Correctness::Deterministic() {
  // Shapes that the adaptive variants (06–09) split across K: the MLP's three big GEMMs, its
  // output layer's forward pass and a long-K case with few tiles. Two runs from the same input
  // must give the same bits: the slices' partial products are summed in a fixed order.
  const std::vector<Shape> shapes = {
      {96, 200, 640}, {256, 784, 1024}, {1024, 784, 256}, {256, 1024, 784}, {256, 10, 1024}};
  std::vector<Case> cases;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    Case c = base();
    c.m = shapes[i].m, c.n = shapes[i].n, c.k = shapes[i].k;
    c.beta = i % 2 ? 0.5f : 0.0f;
    c.seed = seed_for("Deterministic", c.op_a, c.op_b, i);
    if (on_host() && c.fma_count() > kHostMaxFma) continue;
    cases.push_back(gemm_test::finished(c));
  }
  const Batch batch(std::move(cases));
  std::vector<std::string> errors_first, errors_second;
  const std::vector<float> first = gemm_test::run_batch(variant(), batch, errors_first);
  const std::vector<float> second = gemm_test::run_batch(variant(), batch, errors_second);
  for (std::size_t i = 0; i < batch.cases().size(); ++i) {
    const std::string what = batch.cases()[i].describe();
    ASSERT_TRUE(errors_first[i].empty() && errors_second[i].empty())
        << what << ": " << errors_first[i] << errors_second[i];
    const gemm_test::Placement& at = batch.placements()[i];
    EXPECT_EQ(0, std::memcmp(first.data() + at.c_begin, second.data() + at.c_begin,
                             (at.c_end - at.c_begin) * sizeof(float)))
        << what << ": two runs of variant '" << variant().name << "' differ";
  }
  RecordProperty("cases", int(batch.cases().size()));
}

std::string param_name(const Param& p) {
  return safe_name(p.variant) + "_" + gemm::layout_name(p.op_a, p.op_b);
}

const bool correctness_registered = [] {
  Correctness::register_all("Gemm/Correctness",
                            {{"EdgeShapes", &Correctness::EdgeShapes},
                             {"LeadingDims", &Correctness::LeadingDims},
                             {"Misaligned", &Correctness::Misaligned},
                             {"AlphaBeta", &Correctness::AlphaBeta},
                             {"RandomShapes", &Correctness::RandomShapes},
                             {"Deterministic", &Correctness::Deterministic},
                             {"Epilogues", &Correctness::Epilogues}},
                            correctness_params(), param_name);
  return true;
}();

// ---------------------------------------------------------------------------------------------
// Malformed calls: gemm::Error with a message naming the problem, never a crash. Validation runs
// before anything touches the GPU, so these run for every variant without one.

std::vector<std::string> variant_names(bool device_only) {
  std::vector<std::string> out;
  for (const gemm::Variant& v : gemm::variants())
    if (!device_only || v.memory == gemm::Memory::Device) out.push_back(v.name);
  return out;
}

// Expects gemm::run to throw gemm::Error whose message contains every one of `needles`.
void expect_error(const std::string& variant, const gemm::Problem& p,
                  const std::vector<std::string>& needles, const std::string& what) {
  try {
    gemm::run(variant, p);
    ADD_FAILURE() << what << ": no gemm::Error thrown";
  } catch (const gemm::Error& e) {
    const std::string msg = e.what();
    for (const std::string& n : needles)
      EXPECT_NE(msg.find(n), std::string::npos)
          << what << ": message lacks \"" << n << "\"; got: " << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": threw something other than gemm::Error: " << e.what();
  }
}

class Malformed : public Parameterised<std::string, Malformed> {
 public:
  void BadSizes();
  void LeadingDimTooSmall();
  void NullPointers();
  void BadOp();
  void BadEpilogue();

 protected:
  // M = 5, N = 6, K = 7 (distinct, so a message names the right one), tight lds, in host
  // buffers big enough for any layout. A device variant never reaches them: validation throws
  // first.
  std::vector<float> a_ = std::vector<float>(64, 1.0f), b_ = a_, c_ = a_;
  gemm::Problem valid(Op op_a, Op op_b) {
    gemm::Problem p;
    p.op_a = op_a, p.op_b = op_b;
    p.m = 5, p.n = 6, p.k = 7;
    p.a = a_.data(), p.b = b_.data(), p.c = c_.data();
    p.lda = op_a == Op::N ? 7 : 5;
    p.ldb = op_b == Op::N ? 6 : 7;
    p.ldc = 6;
    return p;
  }
  // After the errors, a device variant must still work: the errors did not poison the context.
  void TearDown() override {
    const gemm::Variant& v = gemm::find_variant(GetParam());
    if (v.memory != gemm::Memory::Device || !gemm::cuda_device_available()) return;
    Batch batch({Case{Op::N, Op::T, 9, 10, 11}});
    const auto failures = gemm_test::run_and_check(v, batch);
    EXPECT_TRUE(failures.empty()) << "variant unusable after rejected calls: " << failures[0];
  }
};

void Malformed::BadSizes() {
  for (int bad : {0, -1, -1000}) {
    for (int which = 0; which < 3; ++which) {
      gemm::Problem p = valid(Op::N, Op::N);
      (which == 0 ? p.m : which == 1 ? p.n : p.k) = bad;
      expect_error(GetParam(), p, {"M, N and K must be >= 1", std::to_string(bad)},
                   std::string("dimension ") + "MNK"[which] + " = " + std::to_string(bad));
    }
  }
}

void Malformed::LeadingDimTooSmall() {
  for (Op op_a : {Op::N, Op::T})
    for (Op op_b : {Op::N, Op::T}) {
      const std::string layout = gemm::layout_name(op_a, op_b);
      const gemm::Problem ok = valid(op_a, op_b);
      for (int delta : {1, 3}) {
        gemm::Problem p = ok;
        p.lda = ok.lda - delta;
        expect_error(GetParam(), p, {"lda = " + std::to_string(p.lda), std::to_string(ok.lda)},
                     layout + " lda too small");
        p = ok;
        p.ldb = ok.ldb - delta;
        expect_error(GetParam(), p, {"ldb = " + std::to_string(p.ldb), std::to_string(ok.ldb)},
                     layout + " ldb too small");
        p = ok;
        p.ldc = ok.ldc - delta;
        expect_error(GetParam(), p, {"ldc = " + std::to_string(p.ldc), std::to_string(ok.ldc)},
                     layout + " ldc too small");
      }
      gemm::Problem p = ok;
      p.lda = 0;
      expect_error(GetParam(), p, {"lda = 0"}, layout + " lda = 0");
      p = ok;
      p.ldc = -4;
      expect_error(GetParam(), p, {"ldc = -4"}, layout + " ldc = -4");
    }
}

void Malformed::NullPointers() {
  gemm::Problem p = valid(Op::N, Op::T);
  p.a = nullptr;
  expect_error(GetParam(), p, {"A is a null pointer"}, "null A");
  p = valid(Op::N, Op::T);
  p.b = nullptr;
  expect_error(GetParam(), p, {"B is a null pointer"}, "null B");
  p = valid(Op::N, Op::T);
  p.c = nullptr;
  expect_error(GetParam(), p, {"C is a null pointer"}, "null C");
}

void Malformed::BadEpilogue() {
  gemm::Problem p = valid(Op::N, Op::T);
  p.epilogue = gemm::EpilogueOp::Bias;
  expect_error(GetParam(), p, {"epilogue bias needs a bias"}, "bias epilogue without a bias");
  p.epilogue = gemm::EpilogueOp::BiasRelu;
  expect_error(GetParam(), p, {"epilogue bias_relu needs a bias"}, "bias_relu without a bias");
  p.epilogue = gemm::EpilogueOp::ReluMask;
  expect_error(GetParam(), p, {"relu_mask needs a mask"}, "relu_mask without a mask");
  p.mask = a_.data();
  p.ldmask = 5;
  expect_error(GetParam(), p, {"ldmask = 5", "6"}, "relu_mask with ldmask < N");
  p.epilogue = static_cast<gemm::EpilogueOp>(9);
  expect_error(GetParam(), p, {"epilogue must be one of"}, "an unknown epilogue");
}

void Malformed::BadOp() {
  gemm::Problem p = valid(Op::N, Op::N);
  p.op_a = static_cast<Op>('X');
  expect_error(GetParam(), p, {"op_a and op_b"}, "op_a = 'X'");
}

std::string variant_param_name(const std::string& v) { return safe_name(v); }

const bool malformed_registered = [] {
  Malformed::register_all("Gemm/Malformed",
                          {{"BadSizes", &Malformed::BadSizes},
                           {"LeadingDimTooSmall", &Malformed::LeadingDimTooSmall},
                           {"NullPointers", &Malformed::NullPointers},
                           {"BadOp", &Malformed::BadOp},
                           {"BadEpilogue", &Malformed::BadEpilogue}},
                          variant_names(false), variant_param_name);
  return true;
}();

class DevicePointers : public Parameterised<std::string, DevicePointers> {
 public:
  void HostPointerRejected();
};

// A host pointer handed to a device variant is rejected before any kernel touches it, naming the
// operand, and the variant works afterwards.
void DevicePointers::HostPointerRejected() {
  VARIANT_TEST_OR_SKIP(gemm::find_variant(GetParam()));
  struct Buf {
    float* p = nullptr;
    ~Buf() {
      if (p) cudaFree(p);
    }
  } da, db, dc;
  CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&da.p), 64 * sizeof(float)));
  CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&db.p), 64 * sizeof(float)));
  CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&dc.p), 64 * sizeof(float)));
  std::vector<float> host(64, 1.0f);
  gemm::Problem p;
  p.m = 4, p.n = 4, p.k = 4, p.lda = 4, p.ldb = 4, p.ldc = 4;
  const float* names_a[] = {host.data(), da.p, da.p};
  const float* names_b[] = {db.p, host.data(), db.p};
  float* names_c[] = {dc.p, dc.p, host.data()};
  const char* which[] = {"A is not device memory", "B is not device memory",
                         "C is not device memory"};
  for (int i = 0; i < 3; ++i) {
    p.a = names_a[i], p.b = names_b[i], p.c = names_c[i];
    expect_error(GetParam(), p, {which[i], GetParam()}, std::string("host ") + "ABC"[i]);
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  Batch batch({Case{Op::T, Op::N, 9, 10, 11}});
  const auto failures = gemm_test::run_and_check(gemm::find_variant(GetParam()), batch);
  EXPECT_TRUE(failures.empty()) << failures[0];
}

const bool device_pointers_registered = [] {
  DevicePointers::register_all("Gemm/DevicePointers",
                               {{"HostPointerRejected", &DevicePointers::HostPointerRejected}},
                               variant_names(true), variant_param_name);
  return true;
}();

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
      gemm_test::ref_gemm(op_a, op_b, 2, 2, 3, op_a == Op::N ? a_n : a_t, op_a == Op::N ? 3 : 2,
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
  gemm_test::ref_gemm(p.op_a, p.op_b, p.m, p.n, p.k, p.a, p.lda, p.b, p.ldb, dot, abs_sum);
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
  const gemm::Variant fake{"fake", gemm::Memory::Host, gemm::Precision::FP32, "test", launch_fake};
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
  auto failures = gemm_test::run_and_check(fake, batch);
  EXPECT_TRUE(failures.empty()) << failures[0];
  for (const auto& [spoil, needle] : spoils) {
    g_spoil = spoil;
    failures = gemm_test::run_and_check(fake, batch);
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
  gemm_test::ref_gemm(Op::N, Op::N, m, n, k, a.data(), k, b.data(), n, dot, abs_sum);
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
              gemm_test::kTolFp32);
  EXPECT_LT(worst, gemm_test::kTolFp32 / 10) << "less than 10x margin to the fp32 tolerance";
}

TEST(GemmTolerance, Tf32TruncatedInputsAtK4096FitBound) {
  const double worst = worst_relative_error(4096, tf32_truncate);
  std::printf("tf32 (truncated), K = 4096: worst |c - ref| / sum|a*b| = %.3g (tolerance %.0e)\n",
              worst, gemm_test::kTolTf32);
  EXPECT_LT(worst, gemm_test::kTolTf32 / 2);
}

}  // namespace
