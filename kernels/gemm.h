// The public GEMM contract. Outside kernels/, code includes this header and nothing else from
// kernels/ (tests/kernels and tools/tune, which test and tune the kernels, excepted); the
// project's ground floor, base/, is for everyone.
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
// An optional epilogue is applied to each v = alpha·(op(A)·op(B))[i][j] + beta·C[i][j] in
// registers, before the one store of C[i][j]:
//   Bias       C[i][j] = v + bias[j]                  bias has N values
//   BiasRelu   C[i][j] = max(v + bias[j], 0)          the stored output is what ReLU's backward
//                                                     needs (> 0 exactly where the input was)
//   ReluMask   C[i][j] = mask[i][j] > 0 ? v : 0       mask is M×N, ldmask ≥ N: a ReLU's saved
//                                                     output, for the input gradient through it
//
// A linear layer Y = X·Wᵀ + b (W is out×in) uses three layouts:
//   forward          Y  = X·Wᵀ    NT
//   input gradient   dX = dY·W    NN
//   weight gradient  dW = dYᵀ·X   TN (beta = 1 when gradients accumulate)
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

#include "base/cuda_check.h"
#include "base/dependent_launch.h"

namespace gemm {

// Every failure in kernels/ (bad arguments, a CUDA or cuBLAS error) is reported as a gemm::Error,
// the project's one error type, whose message names the problem.
using Error = gemm_mlp::Error;

enum class Op : char { N = 'N', T = 'T' };

// See the epilogues at the top of this file.
enum class EpilogueOp : char { None, Bias, BiasRelu, ReluMask };

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
  EpilogueOp epilogue = EpilogueOp::None;
  const float* bias = nullptr;  // Bias, BiasRelu: N values, any alignment
  const float* mask = nullptr;  // ReluMask: M×N, row stride ldmask, any alignment
  int ldmask = 0;
};

// Where a variant's pointers live and it runs: Device::CUDA or Device::CPU (cuda_check.h).
using gemm_mlp::Device;

// Arithmetic a variant uses: plain fp32 FMAs, or TF32 tensor cores (10-bit mantissa inputs,
// fp32 accumulation) whose results need the looser TF32 tolerance.
enum class Precision { FP32, TF32 };

// The accuracy a precision promises, per element of C, against a double-precision result ref:
//   |c − ref| ≤ tolerance(precision)·(|alpha|·Σ_k |op(A)[i][k]·op(B)[k][j]| + |beta·C0[i][j]|)
// plus a tiny absolute 1e-20. The tests and gemm_bench check every variant with it; why these
// values hold is in docs/DESIGN.md, "Tolerance".
constexpr double tolerance(Precision p) { return p == Precision::TF32 ? 2e-3 : 1e-5; }
constexpr double kToleranceFloor = 1e-20;

using LaunchFn = void (*)(const Problem&, cudaStream_t);
// Why a variant cannot run on the current device, or nullptr when it can.
using UnavailableFn = const char* (*)();

struct Variant {
  const char* name;
  Device device;
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
// dimensions, null pointers, an epilogue's missing operand).
void validate(const Problem& p);

// Why `variant` cannot run on the current device (e.g. wgmma on a GPU other than Hopper), or
// nullptr when it can. Needs a usable GPU for device variants.
const char* unavailable_reason(const Variant& variant);

// The one dispatch point: validates p, then runs it with `variant` on `stream` (ignored by
// host variants). Device variants return without synchronising; launch errors are thrown.
void run(const Variant& variant, const Problem& p, cudaStream_t stream = nullptr);
void run(const std::string& variant, const Problem& p, cudaStream_t stream = nullptr);

// Scratch memory. Some device variants need scratch on the device for a call: split-K's partial
// sums, K-major copies of MN-major operands, cuBLAS's workspace. By default each use keeps a
// grow-only buffer per device and stream, allocated with cudaMalloc the first time a size is
// needed; so a CUDA graph capture, in which cudaMalloc fails, must follow one uncaptured call of
// each shape. A caller with a stream-ordered allocator (PyTorch's caching allocator, which also
// serves captures from the graph's pool) installs it instead for the calls its thread makes.
class WorkspaceAllocator {
 public:
  virtual ~WorkspaceAllocator() = default;
  // `bytes` of device memory on the current device for work enqueued on `stream`. It must stay
  // valid until the work the call enqueues completes; it is not handed back.
  virtual void* allocate(std::size_t bytes, cudaStream_t stream) = 0;
};

// Routes this thread's scratch requests to `allocator` while the scope lives (then back to the
// one before it, or the default).
class ScopedWorkspaceAllocator {
 public:
  explicit ScopedWorkspaceAllocator(WorkspaceAllocator& allocator);
  ~ScopedWorkspaceAllocator();
  ScopedWorkspaceAllocator(const ScopedWorkspaceAllocator&) = delete;
  ScopedWorkspaceAllocator& operator=(const ScopedWorkspaceAllocator&) = delete;

 private:
  WorkspaceAllocator* previous_;
};

// The host variant's scratch. OpenBLAS maps a buffer (128 MiB and a page on x86-64) on its first
// GEMM on a thread, and where an address-space limit (ulimit -v) leaves no room for it, that GEMM
// retries the map for ever (OpenBLAS before 0.3.30, its issue 5289). Under such a limit this maps
// it now, on the calling thread, before the run's data takes the room; a run on the CPU calls it
// first. Throws gemm_mlp::Error naming the limit when the buffer does not fit. Without a limit,
// or once it has succeeded, it does nothing. Worker threads: base/openblas_threads.h.
void reserve_host_scratch();

// True when a CUDA device can be used (cuda_check.h).
using gemm_mlp::cuda_device_available;

// Programmatic dependent launch, on by default: set_dependent_launch(bool) and
// dependent_launch() (base/dependent_launch.h, included above).

// In-kernel phase timestamps of the production kernels (kernels/fast/phase_times.cuh), for
// gemm_bench --phases: compiled in only with -DGEMM_MLP_PHASE_TIMES=ON, so that the kernels of an
// ordinary build are untouched. Each instrumented kernel's thread 0 of every block writes the
// %globaltimer (ns) at each phase it passes into a row of the log per (kernel, call, block).
namespace phase_times {
enum class Kernel { Pipeline, RegisterA, KMajorCopy, MmaSync, kCount };
// Start: the first instruction; Awaited: the kernel before it on the stream has finished
// (dependent launch); SetUp: barriers initialised (before or after Awaited); FirstStage: the
// first K tile has landed in shared memory; KLoop: the last product has completed; Staged: the
// output tile is in shared memory; SlicesReady: every K slice of the cluster has staged its
// partial (split-K in a cluster); Stored: the block's part of the tile is in C (summed across the
// slices, where split); End: the last instruction (after the cluster's closing barrier).
enum class Phase {
  Start,
  Awaited,
  SetUp,
  FirstStage,
  KLoop,
  Staged,
  SlicesReady,
  Stored,
  End,
  kCount
};
constexpr int kKernels = int(Kernel::kCount), kPhases = int(Phase::kCount);
constexpr int kMaxCalls = 32, kMaxBlocks = 1024;
struct Log {
  unsigned calls[kKernels][kMaxBlocks];                             // launches seen per block index
  unsigned long long ns[kKernels][kMaxCalls][kMaxBlocks][kPhases];  // 0: not reached
};
// Whether this build records phases.
bool compiled_in();
// Clears the log (allocated on first use) and points every instrumented kernel at it; throws
// gemm::Error where the build has no phase timestamps. Then run the calls; read with collect().
void start();
// One row per (kernel, call, block) that was stamped; waits for the device.
struct Row {
  Kernel kernel;
  int call, block;
  unsigned long long ns[kPhases];
};
std::vector<Row> collect();
// Stops recording (the kernels' pointer cleared).
void stop();
const char* kernel_name(Kernel k);
const char* phase_name(Phase p);
}  // namespace phase_times

namespace detail {
// Called by each instrumented translation unit (phase_times.cuh) with a function that points its
// copy of the log's symbol at a log.
void register_phase_log(void (*set)(phase_times::Log*));
}  // namespace detail

// "NN", "NT", "TN" or "TT".
std::string layout_name(Op op_a, Op op_b);

// "none", "bias", "bias_relu" or "relu_mask".
const char* epilogue_name(EpilogueOp e);

}  // namespace gemm
