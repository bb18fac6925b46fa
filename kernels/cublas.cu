// The cuBLAS reference, mapped onto the row-major contract. A row-major X (r×c, ld) is the
// column-major Xᵀ (c×r, ld), so row-major C = op(A)·op(B) is column-major
// Cᵀ = op(B)ᵀ·op(A)ᵀ: swap the operands and M with N, keep the op letters and leading dimensions.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
// Epilogues: bias and bias + ReLU run fused, through cuBLASLt (CUBLASLT_EPILOGUE_BIAS and
// RELU_BIAS; our per-column bias is per row of the column-major Cᵀ, as cuBLASLt wants it).
// cuBLASLt's DRELU reads a bit mask that only its own RELU_AUX forward writes, not a saved
// activation, so relu_mask is cublasGemmEx followed by one elementwise pass over C; so is any
// epilogue for which cuBLASLt's heuristic offers no algorithm (e.g. a bias it cannot align).
#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "kernels/common.cuh"
#include "kernels/launchers.h"

namespace gemm::detail {
namespace {

constexpr size_t kWorkspaceBytes = size_t(32) << 20;  // cuBLAS's own recommendation for Hopper

void cublas_check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLAS error ") + cublasGetStatusName(status) + " (" +
                cublasGetStatusString(status) + ") in " + what);
}

// One handle of each kind per thread and device, created on first use and kept for the process
// (cuBLAS handles are not thread-safe to share, and creating one per call would allocate).
template <class Handle, cublasStatus_t (*Create)(Handle*), cublasStatus_t (*Destroy)(Handle)>
Handle handle_for_current_device(const char* create_name) {
  struct Handles {
    Handle by_device[64] = {};
    ~Handles() {
      for (Handle h : by_device)
        if (h) Destroy(h);
    }
  };
  thread_local Handles handles;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  if (device < 0 || device >= 64) throw Error("cuBLAS: device index out of range");
  Handle& h = handles.by_device[device];
  if (!h) cublas_check(Create(&h), create_name);
  return h;
}

// The workspace of calls on `stream`, set explicitly so that cuBLAS never allocates one itself
// inside a CUDA graph capture.
void* workspace(cudaStream_t stream) {
  return stream_workspace(WorkspaceUse::Cublas, kWorkspaceBytes / sizeof(float), stream);
}

cublasOperation_t to_cublas(Op op) { return op == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T; }

void gemm_ex(const Problem& p, cudaStream_t stream, cublasComputeType_t compute) {
  cublasHandle_t h =
      handle_for_current_device<cublasHandle_t, cublasCreate, cublasDestroy>("cublasCreate");
  cublas_check(cublasSetStream(h, stream), "cublasSetStream");
  cublas_check(cublasSetWorkspace(h, workspace(stream), kWorkspaceBytes), "cublasSetWorkspace");
  cublas_check(cublasGemmEx(h, to_cublas(p.op_b), to_cublas(p.op_a), p.n, p.m, p.k, &p.alpha, p.b,
                            CUDA_R_32F, p.ldb, p.a, CUDA_R_32F, p.lda, &p.beta, p.c, CUDA_R_32F,
                            p.ldc, compute, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
}

// C is m×n (row stride ldc): C[i][j] = c.finish(i, j, C[i][j]).
__global__ void apply_epilogue_kernel(Epilogue c) {
  const int row = blockIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= c.n) return;
  float* dst = c.c + int64_t(row) * c.ldc + col;
  *dst = c.finish(row, col, *dst);
}

void apply_epilogue(const Problem& p, cudaStream_t stream) {
  constexpr int kThreads = 256;
  if (p.m > 65535) throw Error("cuBLAS: an unfused epilogue supports M up to 65535");
  apply_epilogue_kernel<<<dim3((p.n + kThreads - 1) / kThreads, p.m), kThreads, 0, stream>>>(
      epilogue(p));
  CUDA_CHECK_LAUNCH();
}

// The cuBLASLt descriptors and algorithm of one problem shape, built once: descriptor creation
// and the heuristic query cost more host time than a small GEMM takes on the device.
struct LtPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool found = false;  // false: the heuristic offered no algorithm
  LtPlan() = default;
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;
  ~LtPlan() {
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

// Everything the plan depends on: shape, layout, leading dimensions, epilogue, arithmetic, and
// the pointers' alignments (an algorithm may require 16-byte aligned operands).
using LtKey = std::tuple<int, int, int, char, char, int, int, int, int, int, int, int, int>;

int alignment(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  return a % 16 == 0 ? 16 : a % 8 == 0 ? 8 : a % 4 == 0 ? 4 : 1;
}

void build_lt_plan(LtPlan& plan, cublasLtHandle_t lt, const Problem& p,
                   cublasComputeType_t compute) {
  cublas_check(cublasLtMatmulDescCreate(&plan.desc, compute, CUDA_R_32F),
               "cublasLtMatmulDescCreate");
  // Column-major view: Cᵀ (N×M) = op(B)ᵀ (N×K) · op(A)ᵀ (K×M); the first operand is our B.
  const cublasOperation_t op_first = to_cublas(p.op_b), op_second = to_cublas(p.op_a);
  const cublasLtEpilogue_t epi =
      p.epilogue == EpilogueOp::BiasRelu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
  auto set = [&](cublasLtMatmulDescAttributes_t attr, const void* value, size_t size) {
    cublas_check(cublasLtMatmulDescSetAttribute(plan.desc, attr, value, size),
                 "cublasLtMatmulDescSetAttribute");
  };
  set(CUBLASLT_MATMUL_DESC_TRANSA, &op_first, sizeof op_first);
  set(CUBLASLT_MATMUL_DESC_TRANSB, &op_second, sizeof op_second);
  set(CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
  set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &p.bias, sizeof p.bias);
  // As stored, column-major: our B is (op_b = N) N×K or (T) K×N; our A is (N) K×M or (T) M×K.
  const bool b_n = p.op_b == Op::N, a_n = p.op_a == Op::N;
  cublas_check(
      cublasLtMatrixLayoutCreate(&plan.a, CUDA_R_32F, b_n ? p.n : p.k, b_n ? p.k : p.n, p.ldb),
      "cublasLtMatrixLayoutCreate");
  cublas_check(
      cublasLtMatrixLayoutCreate(&plan.b, CUDA_R_32F, a_n ? p.k : p.m, a_n ? p.m : p.k, p.lda),
      "cublasLtMatrixLayoutCreate");
  cublas_check(cublasLtMatrixLayoutCreate(&plan.c, CUDA_R_32F, p.n, p.m, p.ldc),
               "cublasLtMatrixLayoutCreate");
  cublasLtMatmulPreference_t pref = nullptr;
  cublas_check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  const size_t ws_bytes = kWorkspaceBytes;
  cublasStatus_t status = cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes);
  cublasLtMatmulHeuristicResult_t found{};
  int count = 0;
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasLtMatmulAlgoGetHeuristic(lt, plan.desc, plan.a, plan.b, plan.c, plan.c, pref, 1,
                                            &found, &count);
  cublasLtMatmulPreferenceDestroy(pref);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || (status == CUBLAS_STATUS_SUCCESS && count == 0))
    return;
  cublas_check(status, "cublasLtMatmulAlgoGetHeuristic");
  plan.algo = found.algo;
  plan.found = true;
}

// Bias or bias + ReLU fused by cuBLASLt. Returns false, having launched nothing, when its
// heuristic offers no algorithm for this problem.
bool lt_matmul_bias(const Problem& p, cudaStream_t stream, cublasComputeType_t compute) {
  cublasLtHandle_t lt =
      handle_for_current_device<cublasLtHandle_t, cublasLtCreate, cublasLtDestroy>(
          "cublasLtCreate");
  thread_local std::map<std::pair<cublasLtHandle_t, LtKey>, LtPlan> plans;
  const LtKey key{p.m,
                  p.n,
                  p.k,
                  char(p.op_a),
                  char(p.op_b),
                  p.lda,
                  p.ldb,
                  p.ldc,
                  int(p.epilogue),
                  int(compute),
                  alignment(p.a),
                  alignment(p.b),
                  alignment(p.c) * 32 + alignment(p.bias)};
  const auto [it, inserted] = plans.try_emplace({lt, key});
  if (inserted) {
    try {
      build_lt_plan(it->second, lt, p, compute);
    } catch (...) {
      plans.erase(it);
      throw;
    }
  }
  const LtPlan& plan = it->second;
  if (!plan.found) return false;
  cublas_check(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &p.bias,
                                              sizeof p.bias),
               "cublasLtMatmulDescSetAttribute");
  cublas_check(
      cublasLtMatmul(lt, plan.desc, &p.alpha, p.b, plan.a, p.a, plan.b, &p.beta, p.c, plan.c, p.c,
                     plan.c, &plan.algo, workspace(stream), kWorkspaceBytes, stream),
      "cublasLtMatmul");
  return true;
}

void launch(const Problem& p, cudaStream_t stream, cublasComputeType_t gemm_ex_compute,
            cublasComputeType_t lt_compute) {
  const bool fused_bias = p.epilogue == EpilogueOp::Bias || p.epilogue == EpilogueOp::BiasRelu;
  if (fused_bias && lt_matmul_bias(p, stream, lt_compute)) return;
  gemm_ex(p, stream, gemm_ex_compute);
  if (p.epilogue != EpilogueOp::None) apply_epilogue(p, stream);
}

}  // namespace

// CUBLAS_COMPUTE_32F_PEDANTIC: true fp32 arithmetic, whatever NVIDIA_TF32_OVERRIDE says.
// cuBLASLt takes CUBLAS_COMPUTE_32F, also plain fp32 (TF32 only when asked for by name).
void launch_cublas(const Problem& p, cudaStream_t stream) {
  launch(p, stream, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_COMPUTE_32F);
}

void launch_cublas_tf32(const Problem& p, cudaStream_t stream) {
  launch(p, stream, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_COMPUTE_32F_FAST_TF32);
}

}  // namespace gemm::detail
