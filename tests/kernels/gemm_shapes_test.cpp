// Gemm/Correctness kinds about shapes and storage: EdgeShapes, LeadingDims, Misaligned,
// RandomShapes (correctness.h).
#include <random>
#include <vector>

#include "correctness.h"

namespace gemm_test {

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
      // blocks (fast, tf32, wgmma, auto) take their large-tile paths too; K small to keep
      // the reference cheap. wgmma's 256×128 tile needs the last two for 132 multiprocessors.
      {1536, 1536, 64},
      {1537, 1409, 33},
      {2048, 2048, 16},
      {2304, 2304, 16},
      {2305, 2177, 40},
      // Step 5's small tile: 256 tiles in 3 planned slices are 768 blocks, past one wave of its
      // 660 resident on the H200, so it runs 2 (in_whole_waves).
      {1024, 1024, 200},
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
      Case c = finished([&] {
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
        c = finished(c);
        c.lda += ld_extra, c.ldb += ld_extra, c.ldc += ld_extra;
        c.off_a = o[0], c.off_b = o[1], c.off_c = o[2];
        cases.push_back(c);
      }
  run_cases("Misaligned", cases);
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
    c = finished(c);
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

}  // namespace gemm_test
