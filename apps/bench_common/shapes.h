// gemm_bench's GEMM shapes: M×N×K with a layout, as --shapes gives them, and the problems they
// make. The tune programs (tools/tune/) use Shape and tight_problem too.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/gemm.h"

namespace bench {

// A bad command line: gemm_bench exits with status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Shape {
  int m = 1, n = 1, k = 1;
  gemm::Op op_a = gemm::Op::N, op_b = gemm::Op::N;

  std::string text() const {  // "256x1024x784"
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  }
  std::string layout() const { return gemm::layout_name(op_a, op_b); }  // "NT"
  double flop() const { return 2.0 * m * double(n) * k; }
};

// "4096" (square, NN), "256x1024x784" (NN) or "256x1024x784:NT"; throws UsageError.
Shape parse_shape(const std::string& text);

// parse_shape of each text, or `fallback` when there are none.
std::vector<Shape> parse_shapes(const std::vector<std::string>& texts, std::vector<Shape> fallback);

// The device default: squares 256..8192 (NN) and the MLP's GEMMs.
std::vector<Shape> default_shapes();

// The host variant's default: squares 256, 512, 1024.
std::vector<Shape> default_host_shapes();

// C = A·B for shape s with tight leading dimensions, alpha = 1, beta = 0, no epilogue.
inline gemm::Problem tight_problem(const Shape& s, const float* a, const float* b, float* c) {
  gemm::Problem p;
  p.op_a = s.op_a, p.op_b = s.op_b;
  p.m = s.m, p.n = s.n, p.k = s.k;
  p.a = a, p.b = b, p.c = c;
  p.lda = s.op_a == gemm::Op::N ? s.k : s.m;
  p.ldb = s.op_b == gemm::Op::N ? s.n : s.k;
  p.ldc = s.n;
  return p;
}

}  // namespace bench
