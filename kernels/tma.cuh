// Hopper's asynchronous copy machinery of steps 9 and 11 (and fast/): mbarriers (shared-memory
// barriers that count thread arrivals and bytes still in flight), the named barriers of the
// producer and consumer warpgroups, TMA tile copies (one thread asks the copy engine for a whole
// box of a 2-D tensor; the engine computes every address, zero-fills what lies outside the
// tensor, and reports the bytes on an mbarrier), how a producer fills a swizzled tile from them
// (TmaTileSource), and on the host the tensor map that describes an operand's tiles to the copy
// engine (make_tile_map).
// sm_90a only: include from files that kernels/CMakeLists.txt compiles for sm_90a.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <string>

#include "kernels/common.cuh"
#include "kernels/pipeline.cuh"
#include "kernels/wgmma.cuh"

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
// Bounded: a phase still open after 10 s is one that never completes (a copy that never lands, an
// arrival that never comes; no kernel here runs that long, even under compute-sanitizer), and the
// kernel traps, so that its launch fails with an error instead of hanging. The clock is read only
// once the first try has failed.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, int parity) {
  constexpr unsigned long long kLimitNs = 10'000'000'000ull;
  auto done = [&] {  // waits a while in hardware before it answers no
    uint32_t completed;
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(completed)
        : "r"(smem_address(bar)), "r"(parity)
        : "memory");
    return completed != 0;
  };
  if (done()) return;
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  while (!done()) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start > kLimitNs) __trap();
  }
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

// The shared memory a warp-specialised block lays its stages out in: 227 KB, less 1 KB to align
// them to the 1024-byte swizzle atoms and 256 bytes for the mbarriers.
constexpr int kWsSmemBudgetFloats = (227 * 1024 - 1024 - 256) / int(sizeof(float));

// How a warp-specialised producer fills one aligned operand's BX×32 swizzled tile of K tile kt
// (steps 9 and 11): K-major, TMA lands it straight in the tile, swizzled as wgmma reads it;
// MN-major, TMA lands it as stored in a staging area, and the producer's 128 threads transpose it
// into the tile. map: make_tile_map(op, BX); x0: the tile's first row (M or N); k_begin: the first
// k of the block's K slice.
template <int BX, bool KMajor>
struct TmaTileSource {
  static constexpr int kTileBytes = BX * kPanelK * int(sizeof(float));
  static constexpr int kDirectBytes = KMajor ? kTileBytes : 0;  // counted on the stage's "full"
  static constexpr int kStagedBytes = KMajor ? 0 : kTileBytes;  // counted on its "landed"
  static constexpr int kStagedFloats = KMajor ? 0 : BX * kPanelK;
  const CUtensorMap* map;
  int x0, k_begin;

  // Thread 0: start the TMA copy of K tile kt, into `tile` (K-major) or `staging` (MN-major).
  __device__ __forceinline__ void copy(float* tile, float* staging, int kt, uint64_t* bar) const {
    if constexpr (KMajor)
      tma_load_tile(tile, map, k_begin + kt * kPanelK, x0, bar);
    else
      tma_load_tile(staging, map, x0, k_begin + kt * kPanelK, bar);
  }
  // Every producer thread (ptid < 128): an MN-major tile, from the staging area into `tile`.
  // TUTORIAL: for each (x, k) of the BX×32 tile, tile[swizzled<BX>(x, k)] = staging[k·BX + x],
  // a 4×4 block per thread at a time (wgmma.cuh's SwizzledTileLoader).
  __device__ __forceinline__ void transpose(float* tile, const float* staging, int ptid) const {
    if constexpr (!KMajor)
      SwizzledTileLoader<BX, kPanelK, 128, false>::copy(
          tile, Operand<false>{staging, BX, BX, kPanelK, true}, 0, 0, ptid);
  }
};

inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                                cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || fn == nullptr)
      throw Error("gemm: the CUDA driver has no cuTensorMapEncodeTiled (TMA needs CUDA 12)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encode;
}

// A tensor map for TMA copies of one operand in boxes of box_contiguous (along its contiguous
// dim) by box_lines, with the given swizzle. The operand must be 16-byte aligned with ld % 4 == 0
// (Operand::vec4_ok); throws gemm::Error otherwise or if the driver refuses the map.
template <bool KMajor>
CUtensorMap encode_tile_map(const Operand<KMajor>& op, int box_contiguous, int box_lines,
                            CUtensorMapSwizzle swizzle) {
  if (!op.vec4_ok) throw Error("gemm: a TMA tile map needs a 16-byte aligned operand, ld % 4 == 0");
  CUtensorMap map{};
  const cuuint64_t k = cuuint64_t(op.extent_k), x = cuuint64_t(op.extent_x);
  const cuuint64_t dims[2] = {KMajor ? k : x, KMajor ? x : k};        // contiguous dim first
  const cuuint64_t strides[1] = {cuuint64_t(op.ld) * sizeof(float)};  // bytes per line
  const cuuint32_t box[2] = {cuuint32_t(box_contiguous), cuuint32_t(box_lines)};
  const cuuint32_t unit_steps[2] = {1, 1};
  const auto encode = [&] {
    return tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(op.p),
                                dims, strides, box, unit_steps, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  };
  CUresult r = encode();
  // The driver's encoder needs a current context, which a thread that has only set its device
  // lacks (PyTorch's autograd threads): a runtime call binds the device's primary context.
  if (r == CUDA_ERROR_INVALID_CONTEXT) {
    CUDA_CHECK(cudaFree(nullptr));
    r = encode();
  }
  if (r != CUDA_SUCCESS)
    throw Error("gemm: cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) +
                ") for an operand of " + std::to_string(op.extent_x) + " x " +
                std::to_string(op.extent_k) + ", ld " + std::to_string(op.ld));
  return map;
}

// A tensor map for TMA copies of one operand's tiles of bx rows (M or N) by 32 k. K-major: boxes
// of 32 k (one 128-byte panel) × bx, 128-byte swizzled as wgmma.cuh's swizzled<bx>() expects (the
// tile 1024-byte aligned). MN-major: boxes of bx × 32 k, as stored (a staging area that the
// kernel's threads transpose).
template <bool KMajor>
CUtensorMap make_tile_map(const Operand<KMajor>& op, int bx) {
  return KMajor ? encode_tile_map(op, kPanelK, bx, CU_TENSOR_MAP_SWIZZLE_128B)
                : encode_tile_map(op, bx, kPanelK, CU_TENSOR_MAP_SWIZZLE_NONE);
}

}  // namespace gemm::detail
