// The public GEMM contract. Outside kernels/, code includes this header (and cuda_check.h for
// its own CUDA calls) and nothing else from kernels/.
//
//   C[M×N] = alpha · op(A)[M×K] · op(B)[K×N] + beta · C        (row-major, as BLAS but row-major)
//
// Storage, with op ∈ {N, T}:
//   op_a = N: A is M×K, lda ≥ K        op_a = T: A is K×M, lda ≥ M
//   op_b = N: B is K×N, ldb ≥ N        op_b = T: B is N×K, ldb ≥ K
//   C is M×N, ldc ≥ N.
// Any M, N, K ≥ 1, any leading dimension that satisfies the above, any pointer alignment.
// With beta = 0, C is only written, never read (NaN in C does not leak into the result).
//
// A linear layer Y = X·Wᵀ + b (W is out×in) uses three layouts:
//   forward          Y  = X·Wᵀ    NT
//   input gradient   dX = dY·W    NN
//   weight gradient  dW = dYᵀ·X   TN (beta = 1 when gradients accumulate)
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace gemm {

// Every failure in kernels/ (bad arguments, a CUDA or cuBLAS error) is reported as a gemm::Error
// whose message names the problem.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Op : char { N = 'N', T = 'T' };

struct Problem {
  Op op_a = Op::N;
  Op op_b = Op::N;
  int m = 0, n = 0, k = 0;
  float alpha = 1.0f;
  const float* a = nullptr;
  int lda = 0;
  const float* b = nullptr;
  int ldb = 0;
  float beta = 0.0f;
  float* c = nullptr;
  int ldc = 0;
};

// Where a variant's pointers live.
enum class Memory { Device, Host };

// Arithmetic a variant uses: plain fp32 FMAs, or TF32 tensor cores (10-bit mantissa inputs,
// fp32 accumulation) whose results need the looser TF32 tolerance.
enum class Precision { FP32, TF32 };

using LaunchFn = void (*)(const Problem&, cudaStream_t);
// Why a variant cannot run on the current device, or nullptr when it can.
using UnavailableFn = const char* (*)();

struct Variant {
  const char* name;
  Memory memory;
  Precision precision;
  const char* summary;  // one line, shown by --help and --list
  LaunchFn launch;
  UnavailableFn unavailable = nullptr;  // null: runs on every GPU the project builds for
};

// All variants, in the order a reader should take them.
const std::vector<Variant>& variants();

// The variant called `name`; throws gemm::Error listing the known names if there is none.
const Variant& find_variant(const std::string& name);

// Throws gemm::Error naming the first violated rule of the contract above (sizes, leading
// dimensions, null pointers).
void validate(const Problem& p);

// Why `variant` cannot run on the current device (e.g. wgmma on a GPU other than Hopper), or
// nullptr when it can. Needs a usable GPU for device variants.
const char* unavailable_reason(const Variant& variant);

// The one dispatch point: validates p, then runs it with `variant` on `stream` (ignored by
// host variants). Device variants return without synchronising; launch errors are thrown.
void run(const Variant& variant, const Problem& p, cudaStream_t stream = nullptr);
void run(const std::string& variant, const Problem& p, cudaStream_t stream = nullptr);

// True when a CUDA device can be used. Any error from cudaGetDeviceCount (no driver, an
// insufficient driver, no device) counts as "no GPU". Inline, so that code asking only this
// needs cudart and not the kernels library.
inline bool cuda_device_available() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // leave no error behind for the next CUDA call to report
    return false;
  }
  return count > 0;
}

// "NN", "NT", "TN" or "TT".
std::string layout_name(Op op_a, Op op_b);

}  // namespace gemm
