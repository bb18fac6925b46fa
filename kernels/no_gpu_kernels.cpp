// The device variants' launchers in a build without GPU kernels (-DGEMM_MLP_GPU_KERNELS=OFF, which
// scripts/train.sh configures where nvidia-smi finds no GPU, so that the CPU path builds in about
// two minutes). The dispatch table still lists every variant; each device one is unavailable
// (gemm::unavailable_reason) and throws if run, saying how to rebuild. Never a silent fallback.
#include <string>

#include "kernels/launchers.h"

namespace gemm::detail {

const char* no_gpu_kernels_reason() {
  return "this build has no GPU kernels (configured with -DGEMM_MLP_GPU_KERNELS=OFF, as "
         "scripts/train.sh does where nvidia-smi finds no GPU): rebuild with cmake -S . -B build "
         "-DGEMM_MLP_GPU_KERNELS=ON && cmake --build build (scripts/test.sh does), or use the CPU "
         "(--device cpu, --gemm cpu)";
}

namespace {

[[noreturn]] void no_gpu_kernels(const char* variant) {
  throw Error(std::string("gemm: ") + variant + ": " + no_gpu_kernels_reason());
}

}  // namespace

void launch_naive(const Problem&, cudaStream_t) { no_gpu_kernels("naive"); }
void launch_tiled(const Problem&, cudaStream_t) { no_gpu_kernels("tiled"); }
void launch_vec(const Problem&, cudaStream_t) { no_gpu_kernels("vec"); }
void launch_regtile(const Problem&, cudaStream_t) { no_gpu_kernels("regtile"); }
void launch_double_buffer(const Problem&, cudaStream_t) { no_gpu_kernels("dbuf"); }
void launch_warptile(const Problem&, cudaStream_t) { no_gpu_kernels("warptile"); }
void launch_tf32_mma(const Problem&, cudaStream_t) { no_gpu_kernels("tf32"); }
void launch_wgmma(const Problem&, cudaStream_t) { no_gpu_kernels("wgmma"); }
void launch_wgmma_ws(const Problem&, cudaStream_t) { no_gpu_kernels("wgmma_ws"); }
const char* wgmma_unavailable() { return no_gpu_kernels_reason(); }
void launch_tf32x3(const Problem&, cudaStream_t) { no_gpu_kernels("tf32x3"); }
void launch_tf32x3_ws(const Problem&, cudaStream_t) { no_gpu_kernels("tf32x3_ws"); }
void launch_fast(const Problem&, cudaStream_t) { no_gpu_kernels("fast"); }
void launch_tf32x3_fast(const Problem&, cudaStream_t) { no_gpu_kernels("tf32x3_fast"); }
void launch_tf32_fast(const Problem&, cudaStream_t) { no_gpu_kernels("tf32_fast"); }
bool wgmma_register_a_serves(const Problem&) { return false; }
bool wgmma_register_a_fills_half(const Problem&, int) { return false; }
void launch_wgmma_register_a(const Problem&, cudaStream_t) { no_gpu_kernels("tf32_fast"); }
void launch_wgmma_register_a_tf32x3(const Problem&, cudaStream_t) { no_gpu_kernels("tf32x3_fast"); }
void launch_cublas(const Problem&, cudaStream_t) { no_gpu_kernels("cublas"); }
void launch_cublas_tf32(const Problem&, cudaStream_t) { no_gpu_kernels("cublas_tf32"); }

}  // namespace gemm::detail
