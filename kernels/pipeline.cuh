// Asynchronous global→shared copies (cp.async, sm_80 and newer) and the multi-stage K loop built
// on them (step 7's pipeline, 07_tf32.cu), shared by the tensor-core steps 7–11 and the production
// kernels of fast/ (whose own loops, built on the same copies, are in fast/pipeline_loops.cuh).
#pragma once

#include "kernels/common.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "the pipelined GEMM variants need cp.async: build for sm_80 or newer"
#endif

namespace gemm::detail {

__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes, both ends 16-byte aligned; bypasses L1 (.cg), the data is used once per block.
__device__ __forceinline__ void cp_async16(float* dst, const float* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_address(dst)), "l"(src));
}

// One element, or a zero where (x, k) is outside the operand: the copy reads 0 source bytes and
// fills the destination with zeros.
template <bool KMajor>
__device__ __forceinline__ void cp_async_element(float* dst, const Operand<KMajor>& op, int x,
                                                 int k) {
  const bool inside = op.in_bounds(x, k);
  const float* src = inside ? op.p + op.offset(x, k) : op.p;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_address(dst)), "l"(src),
               "r"(inside ? 4 : 0));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

// A tile stored as the operand is stored: K-major tile[x·LDS + kk] for a K-major operand,
// MN-major tile[kk·LDS + x] otherwise, so every copy is 16 bytes where aligned and inside. A tile
// wholly inside an aligned operand (all but the edge blocks) skips the per-chunk checks.
template <int BK, int BX, int LDS, int NT, bool KMajor>
__device__ __forceinline__ void cp_async_tile_native(float* tile, const Operand<KMajor>& op, int x0,
                                                     int k0, int tid) {
  static_assert(BK % 4 == 0 && BX % 4 == 0 && LDS % 4 == 0,
                "16-byte copies need BK, BX and the row stride to be multiples of 4 floats");
  constexpr int kChunksPerLine = (KMajor ? BK : BX) / 4;  // 16-byte chunks per contiguous line
  const bool interior = op.vec4_ok && op.tile_inside(x0, k0, BX, BK);
  for_each_strided<BK * BX / 4, NT>(tid, [&](int i) {
    const int line = i / kChunksPerLine, pos = (i % kChunksPerLine) * 4;
    const int x = KMajor ? line : pos, kk = KMajor ? pos : line;
    float* dst = &tile[line * LDS + pos];
    if (interior || op.vec4_fits(x0 + x, k0 + kk)) {
      cp_async16(dst, op.p + op.offset(x0 + x, k0 + kk));
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j)
        cp_async_element(dst + j, op, x0 + x + (KMajor ? 0 : j), k0 + kk + (KMajor ? j : 0));
    }
  });
}

// The multi-stage K loop. load(stage, k_tile) issues the copies of K tile k_tile into buffer
// `stage`; compute(stage) consumes a buffer. Stages−1 tiles are in flight while one is computed.
// One barrier per K tile: it both publishes the tile that just landed and guarantees that every
// thread has finished with the buffer about to be overwritten (it was computed one step ago).
template <int Stages, class Load, class Compute>
__device__ __forceinline__ void pipelined_k_loop(int k_tiles, Load&& load, Compute&& compute) {
  static_assert(Stages >= 2, "a pipeline needs at least two buffers");
#pragma unroll
  for (int s = 0; s < Stages - 1; ++s) {
    if (s < k_tiles) load(s, s);
    cp_async_commit();  // empty groups keep the group count uniform
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<Stages - 2>();
    __syncthreads();
    const int next = kt + Stages - 1;
    if (next < k_tiles) load(next % Stages, next);
    cp_async_commit();
    compute(kt % Stages);
  }
}

// Opts kKernel into `bytes` of dynamic shared memory, beyond the default 48 KB. Done once per
// kernel: the template parameter is the kernel itself, so every instantiation has its own flag.
template <auto kKernel>
void allow_dynamic_smem(int bytes) {
  static const cudaError_t err =
      cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  CUDA_CHECK(err);
}

}  // namespace gemm::detail
