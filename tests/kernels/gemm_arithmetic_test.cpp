// Gemm/Correctness kinds about the arithmetic: AlphaBeta, Epilogues, Deterministic, WideRange;
// and the registration of every Correctness kind (correctness.h).
#include <cstring>
#include <vector>

#include "correctness.h"

namespace gemm_test {

void Correctness::AlphaBeta() {
  // {96, 200, 640}: a few output tiles and a long K, so that fast splits K across a cluster
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

void Correctness::Epilogues() {
  // Odd shapes, the MLP's five (split across K by fast and 07–09, so the epilogue runs in the
  // split-K reduction or the cluster store), and the large-tile paths; each epilogue with beta 0
  // and 1, aligned and misaligned bias and mask, tight and padded ldmask.
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
  // Shapes that the adaptive variants (fast, 07–09) split across K: the MLP's three big GEMMs, its
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
    cases.push_back(finished(c));
  }
  const Batch batch(std::move(cases));
  std::vector<std::string> errors_first, errors_second;
  const std::vector<float> first = run_batch(variant(), batch, errors_first);
  const std::vector<float> second = run_batch(variant(), batch, errors_second);
  for (std::size_t i = 0; i < batch.cases().size(); ++i) {
    const std::string what = batch.cases()[i].describe();
    ASSERT_TRUE(errors_first[i].empty() && errors_second[i].empty())
        << what << ": " << errors_first[i] << errors_second[i];
    const Placement& at = batch.placements()[i];
    EXPECT_EQ(0, std::memcmp(first.data() + at.c_begin, second.data() + at.c_begin,
                             (at.c_end - at.c_begin) * sizeof(float)))
        << what << ": two runs of variant '" << variant().name << "' differ";
  }
  RecordProperty("cases", int(batch.cases().size()));
}

void Correctness::WideRange() {
  // Operands over 24 octaves (2^-12 … 2^12): every variant still meets its own precision's
  // tolerance, fp32 ones included (tf32x3 among them); GemmTf32x3.* shows that tf32 does not meet
  // the fp32 one here.
  const std::vector<Shape> shapes = {{64, 64, 64}, {33, 65, 17}, {96, 200, 640}, {256, 10, 1024}};
  std::vector<Case> cases;
  for (const Shape& s : shapes)
    for (float beta : {0.0f, 1.0f}) {
      Case c = base();
      c.m = s.m, c.n = s.n, c.k = s.k;
      c.beta = beta;
      c.wide_range = true;
      cases.push_back(c);
    }
  run_cases("WideRange", cases);
}

namespace {

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
                             {"Epilogues", &Correctness::Epilogues},
                             {"WideRange", &Correctness::WideRange}},
                            correctness_params(), param_name);
  return true;
}();

}  // namespace
}  // namespace gemm_test
