// The cuBLAS reference, mapped onto the row-major contract. A row-major X (r×c, ld) is the
// column-major Xᵀ (c×r, ld), so row-major C = op(A)·op(B) is column-major
// Cᵀ = op(B)ᵀ·op(A)ᵀ: swap the operands and M with N, keep the op letters and leading dimensions.
//   A: op(A) is M×K, B: op(B) is K×N, C is M×N.
#include <cublas_v2.h>

#include <string>

#include "kernels/cuda_check.h"
#include "kernels/launchers.h"

namespace gemm::detail {
namespace {

void cublas_check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLAS error ") + cublasGetStatusName(status) + " (" +
                cublasGetStatusString(status) + ") in " + what);
}

// One handle per thread and device, created on first use and kept for the process (cuBLAS
// handles are not thread-safe to share, and creating one per call would allocate each time).
cublasHandle_t handle_for_current_device() {
  struct Handles {
    cublasHandle_t by_device[64] = {};
    ~Handles() {
      for (cublasHandle_t h : by_device)
        if (h) cublasDestroy(h);
    }
  };
  thread_local Handles handles;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  if (device < 0 || device >= 64) throw Error("cuBLAS: device index out of range");
  cublasHandle_t& h = handles.by_device[device];
  if (!h) cublas_check(cublasCreate(&h), "cublasCreate");
  return h;
}

cublasOperation_t to_cublas(Op op) { return op == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T; }

void launch(const Problem& p, cudaStream_t stream, cublasComputeType_t compute) {
  cublasHandle_t h = handle_for_current_device();
  cublas_check(cublasSetStream(h, stream), "cublasSetStream");
  cublas_check(cublasGemmEx(h, to_cublas(p.op_b), to_cublas(p.op_a), p.n, p.m, p.k, &p.alpha, p.b,
                            CUDA_R_32F, p.ldb, p.a, CUDA_R_32F, p.lda, &p.beta, p.c, CUDA_R_32F,
                            p.ldc, compute, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
}

}  // namespace

// CUBLAS_COMPUTE_32F_PEDANTIC: true fp32 arithmetic, whatever NVIDIA_TF32_OVERRIDE says.
void launch_cublas(const Problem& p, cudaStream_t stream) {
  launch(p, stream, CUBLAS_COMPUTE_32F_PEDANTIC);
}

void launch_cublas_tf32(const Problem& p, cudaStream_t stream) {
  launch(p, stream, CUBLAS_COMPUTE_32F_FAST_TF32);
}

}  // namespace gemm::detail
