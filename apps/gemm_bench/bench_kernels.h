// Device helpers for gemm_bench: random fill, |x| copies and the validation reduction. All arrays
// are dense device arrays of n floats.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace bench {

// p[i] = a value in [-1, 1] from a counter-based hash of (seed, i); never zero (|x| ≥ 2^-10).
void fill_random(float* p, std::size_t n, std::uint64_t seed, cudaStream_t stream);

// dst[i] = |src[i]|.
void abs_copy(float* dst, const float* src, std::size_t n, cudaStream_t stream);

// Worst element of |got − want| ≤ tol·scale + tiny over n elements (non-finite `got` counts as
// an infinite violation). scale is Σ_k|a_ik·b_kj|, computed as |A|·|B|.
struct Comparison {
  double worst_ratio = 0.0;     // max |got − want| / (tol·scale + tiny); ≤ 1 passes
  std::size_t worst_index = 0;  // row-major index into C
  float got = 0, want = 0, bound = 0;
  unsigned long long bad = 0;  // elements over their bound
};
Comparison compare(const float* got, const float* want, const float* scale, std::size_t n,
                   double tol, cudaStream_t stream);

}  // namespace bench
