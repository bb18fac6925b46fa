// The machinery behind test_gemm: a GEMM test case, how a batch of cases is laid out in one
// buffer (one upload and one download per batch on the GPU), how it is filled with fresh random
// data and poison, run through gemm::run, and checked against ref_gemm.
//
// Every case's C block looks like this in the buffer (S = sentinel, P = poison or random C):
//
//   [S × guard][S × off_c][P P P … P S S S]  ← row 0: N values, then ldc − N padding
//                         [P P P … P S S S]  ← row 1
//                          …                 ← M rows
//                         [S × guard]
//
// After the call, every S must still be bit-identical: a kernel may write only the M×N region.
// A and B are filled with random values where they hold matrix elements and with NaN in their
// ld padding, so a kernel that lets padding into a result is caught too. The epilogue's bias (N
// values) and mask (M×N, ldmask; random signs, so about half the outputs are masked) are placed
// after B in the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/gemm.h"

namespace gemm_test {

// Per-element bound, with tol = gemm::tolerance(variant precision) and floor =
// gemm::kToleranceFloor (kernels/gemm.h):
//   |c − ref| ≤ tol·(|alpha|·Σ_k|a_ik·b_kj| + |beta·c0_ij|) + floor.
// (The |beta·c0| term covers the rounding of the epilogue's beta·C, which Σ|a·b| does not.)
//
// Why the values hold (docs/DESIGN.md, "Tolerance", has the whole argument):
// FP32, 1e-5: K products summed in fp32 can be off by K·u·Σ|a·b| in the worst case (u = 2^-24),
// 2.4e-4·Σ|a·b| at K = 4096, which would not fit. But that case needs every partial sum to grow
// like Σ|a·b|, i.e. all products of one sign. With signed random inputs, as here, partial sums
// grow like √k and the error relative to Σ|a·b| stays of order u, whatever K: GemmTolerance.*
// measures a sequential fp32 loop at K = 4096 (the worst common summation order) well inside
// the bound. So 1e-5 holds for signed data; it is not a bound for same-sign inputs.
// TF32, 2e-3: inputs rounded to a 10-bit mantissa carry a relative error ≤ 2^-11 each (2^-10 if
// truncated), so each product is off by ≤ ~1e-3 relative, and the sum by ≤ ~1e-3·Σ|a·b|.

struct Case {
  gemm::Op op_a = gemm::Op::N, op_b = gemm::Op::N;
  int m = 1, n = 1, k = 1;
  int lda = 0, ldb = 0, ldc = 0;        // 0 means tight: the row length
  int off_a = 0, off_b = 0, off_c = 0;  // floats past a 256-byte aligned address
  float alpha = 1.0f, beta = 0.0f;
  gemm::EpilogueOp epilogue = gemm::EpilogueOp::None;
  int ldmask = 0;                  // 0 means tight (N); the mask exists for ReluMask only
  int off_bias = 0, off_mask = 0;  // floats past a 256-byte aligned address
  std::uint64_t seed = 0;
  bool wide_range = false;  // A, B, bias and mask magnitudes 2^-12 … 2^12 instead of up to 1

  int rows_a() const { return op_a == gemm::Op::N ? m : k; }
  int cols_a() const { return op_a == gemm::Op::N ? k : m; }
  int rows_b() const { return op_b == gemm::Op::N ? k : n; }
  int cols_b() const { return op_b == gemm::Op::N ? n : k; }
  double fma_count() const { return double(m) * n * k; }
  std::string describe() const;
};

// Fills in tight leading dimensions where they are 0.
Case finished(Case c);

// Where one case's operands lie in the batch buffer, in floats from its start.
struct Placement {
  std::size_t a, b, c;         // the pointers handed to gemm::run
  std::size_t bias, mask;      // the epilogue's operands (always placed; used when it needs them)
  std::size_t c_begin, c_end;  // the whole C block, guards included
};

// One batch: the layout of all cases in a single buffer, 256-byte aligned on the host.
class Batch {
 public:
  explicit Batch(std::vector<Case> cases);
  const std::vector<Case>& cases() const { return cases_; }
  const std::vector<Placement>& placements() const { return at_; }
  std::size_t size() const { return total_; }
  // The input: random A, B (NaN padding), C poisoned or random, sentinels.
  const float* input() const { return input_.get(); }

 private:
  std::vector<Case> cases_;
  std::vector<Placement> at_;
  std::size_t total_ = 0;
  std::unique_ptr<float[], void (*)(void*)> input_;
};

// Case c placed at `at` in a batch buffer that starts at `base`, as a gemm::Problem.
gemm::Problem problem_of(const Case& c, const Placement& at, float* base);

// Runs every case of the batch with `variant` (device variants through one cudaMalloc'd copy,
// synchronised after each case so a fault names its case) and returns the output buffer.
// errors[i] is set when case i threw or faulted; a fault that leaves the context unusable stops
// the batch, and the cases after it are reported as not run.
std::vector<float> run_batch(const gemm::Variant& variant, const Batch& batch,
                             std::vector<std::string>& errors);

// Checks case i of the output against ref_gemm; "" when it passes, else a description of the
// worst element (index, got, want, bound) or of the first write outside the region. If
// worst_ratio is given, it receives the largest |c − ref| / bound over the M×N region (left
// unchanged when the case wrote outside it).
std::string check_case(const Batch& batch, std::size_t i, const float* output, double tol,
                       double* worst_ratio = nullptr);

// Runs and checks the whole batch (the reference on all cores), returning one message per
// failing case.
std::vector<std::string> run_and_check(const gemm::Variant& variant, const Batch& batch);

}  // namespace gemm_test
