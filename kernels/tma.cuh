// Hopper's asynchronous copy machinery for step 9: mbarriers (shared-memory barriers that count
// thread arrivals and bytes still in flight) and TMA tile copies (one thread asks the copy engine
// for a whole box of a 2-D tensor; the engine computes every address, zero-fills what lies
// outside the tensor, and reports the bytes on an mbarrier). The host side, the tensor map that
// describes the global matrix, is made where it is used (09_wgmma_ws.cu).
// sm_90a only: include from files that kernels/CMakeLists.txt compiles for sm_90a.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/pipeline.cuh"

namespace gemm::detail {

__device__ __forceinline__ void mbarrier_init(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(bar)), "r"(count));
}
// Makes the initialised barriers visible to the other threads (and to the copy engine).
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// One arrival; release semantics: this thread's earlier shared-memory writes are visible to a
// thread that sees the phase complete.
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_address(bar)) : "memory");
}
// The current phase also waits for `bytes` more bytes of TMA copies to land.
__device__ __forceinline__ void mbarrier_expect_bytes(uint64_t* bar, int bytes) {
  asm volatile(
      "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(bar)),
      "r"(bytes)
      : "memory");
}
// Waits for the completion of the barrier's phase with this parity (phases alternate 0, 1, 0, …).
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, int parity) {
  uint32_t done = 0;
  while (!done)
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_address(bar)), "r"(parity)
        : "memory");
}

// Barrier 1 among the 128 threads of the producer warpgroup (barrier 0 is __syncthreads).
__device__ __forceinline__ void producer_barrier() {
  asm volatile("bar.sync 1, 128;\n" ::: "memory");
}

// Barrier 2 among the consumer warpgroups' `threads` threads (the first 128 · consumers).
__device__ __forceinline__ void consumer_barrier(int threads) {
  asm volatile("bar.sync 2, %0;\n" ::"r"(threads) : "memory");
}

// Copies the box at coordinates (c0 along the contiguous dim, c1) of `map`'s tensor to dst
// (1024-byte aligned for the 128-byte swizzle) and counts its bytes, zero-filled parts included,
// on `bar`.
__device__ __forceinline__ void tma_load_tile(float* dst, const CUtensorMap* map, int c0, int c1,
                                              uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
      "%3}], [%4];\n" ::"r"(smem_address(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_address(bar))
      : "memory");
}

}  // namespace gemm::detail
