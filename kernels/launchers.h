// Internal to kernels/: one launcher per variant, each defined in its own file and registered in
// dispatch.cpp. Each takes a validated problem (see gemm.h for the shapes) and launches on
// `stream`.
#pragma once

#include "kernels/gemm.h"

namespace gemm::detail {

void launch_naive(const Problem& p, cudaStream_t stream);          // 01_naive.cu
void launch_tiled(const Problem& p, cudaStream_t stream);          // 02_tiled.cu
void launch_vec(const Problem& p, cudaStream_t stream);            // 03_vec.cu
void launch_regtile(const Problem& p, cudaStream_t stream);        // 04_regtile.cu
void launch_double_buffer(const Problem& p, cudaStream_t stream);  // 05_dbuf.cu
void launch_warptile(const Problem& p, cudaStream_t stream);       // 06_warptile.cu
void launch_tf32_mma(const Problem& p, cudaStream_t stream);       // 07_tf32.cu
void launch_wgmma(const Problem& p, cudaStream_t stream);          // 08_wgmma.cu, sm_90a
void launch_wgmma_ws(const Problem& p, cudaStream_t stream);       // 09_wgmma_ws.cu, sm_90a
// Why steps 8, 9 and 11 cannot run on the current GPU, or null on compute capability 9.0
// (08_wgmma.cu).
const char* wgmma_unavailable();
void launch_tf32x3(const Problem& p, cudaStream_t stream);     // 10_tf32x3.cu, fp32-accurate
void launch_tf32x3_ws(const Problem& p, cudaStream_t stream);  // 11_tf32x3_ws.cu, sm_90a, fp32
// The production fp32 kernel beside the ladder: step 6's tiling with a tile chosen per shape,
// split-K and a deeper pipeline (fast/fast.cu).
void launch_fast(const Problem& p, cudaStream_t stream);
// The production fp32-accurate tensor-core kernel: 3×TF32 with a kernel and tile chosen per shape
// (fast/tf32x3_fast.cu).
void launch_tf32x3_fast(const Problem& p, cudaStream_t stream);
// The production TF32 kernel: NN on the register-A kernel, TN weight gradients on K-major copies,
// the rest on the warp-specialised wgmma pipeline (fast/tf32_fast.cu, fast/wgmma_pipeline.h).
void launch_tf32_fast(const Problem& p, cudaStream_t stream);
// tf32_fast's NN kernel: wgmma with B's fragments in registers (fast/wgmma_register_a.cu,
// sm_90a). It serves NN with 16-byte aligned A and B and leading dimensions that are multiples of
// 4; it throws for any other problem.
bool wgmma_register_a_serves(const Problem& p);
// Whether its grid for p's shape (one 256×128 tile, K split on small grids) gives at least half of
// `sms` multiprocessors a block; on fewer, the pipeline's smaller tile is faster
// (docs/NOTES.md, "tf32_fast").
bool wgmma_register_a_fills_half(const Problem& p, int sms);
void launch_wgmma_register_a(const Problem& p, cudaStream_t stream);
// The same kernel and plan in 3×TF32: tf32x3_fast's NN.
void launch_wgmma_register_a_tf32x3(const Problem& p, cudaStream_t stream);
void launch_auto(const Problem& p, cudaStream_t stream);         // auto.cpp
void launch_cublas(const Problem& p, cudaStream_t stream);       // cublas.cu, TF32 off
void launch_cublas_tf32(const Problem& p, cudaStream_t stream);  // cublas.cu, TF32 tensor cores
void launch_cpu(const Problem& p, cudaStream_t stream);          // cpu.cpp, OpenBLAS

// The variant `auto` would run for p on the current device (see auto.cpp).
const char* auto_choice(const Problem& p);

// The allocator a ScopedWorkspaceAllocator installed on this thread, or null (dispatch.cpp).
WorkspaceAllocator* installed_workspace_allocator();

}  // namespace gemm::detail
