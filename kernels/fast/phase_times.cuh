// In-kernel phase timestamps (gemm.h, gemm::phase_times): where a tile's time goes. Built only
// with -DGEMM_MLP_PHASE_TIMES=ON; without it GEMM_PHASE_BEGIN and GEMM_PHASE expand to nothing,
// so the kernels' PTX is what it is without this header's use.
//
// A kernel that records its phases names itself once (GEMM_PHASE_BEGIN(kernel), first statement),
// stamps each phase as its thread 0 reaches it (GEMM_PHASE(phase), the %globaltimer in ns) and
// ends with GEMM_PHASE_END(), which writes the block's stamps into the log row of (kernel, call,
// block), where call is how many times this block index of this kernel was launched before (a
// counter per block index), so that back-to-back calls in one graph each get their own rows. Only
// thread 0 stamps: it is a consumer in every instrumented kernel.
#pragma once

#include "kernels/gemm.h"

#ifdef GEMM_MLP_PHASE_TIMES
#include <cstdint>

#include "base/cuda_check.h"

namespace gemm::detail {

// This translation unit's pointer to the log (each .cu file has its own copy of the symbol; the
// registrar below lets phase_times::start set them all). Thread 0 keeps its block's stamps in
// shared memory and writes them to the log once, at the end, so that the log's atomic and stores
// stay off the phases they time.
static __device__ phase_times::Log* phase_log = nullptr;
static __shared__ unsigned long long phase_ns[phase_times::kPhases];
static __shared__ int phase_kernel;  // the kernel + 1, or 0: not recording

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ void phase_begin(phase_times::Kernel kernel) {
  if (threadIdx.x != 0) return;
  const unsigned long long now = global_ns();
  phase_kernel = phase_log ? int(kernel) + 1 : 0;
  for (int p = 1; p < phase_times::kPhases; ++p) phase_ns[p] = 0;
  phase_ns[int(phase_times::Phase::Start)] = now;
}

__device__ __forceinline__ void phase_stamp(phase_times::Phase phase) {
  if (threadIdx.x == 0 && phase_kernel) phase_ns[int(phase)] = global_ns();
}

// The End stamp, then the block's row into the log (where its call and block fit).
__device__ __forceinline__ void phase_end() {
  if (threadIdx.x != 0 || !phase_kernel) return;
  phase_ns[int(phase_times::Phase::End)] = global_ns();
  const int kernel = phase_kernel - 1;
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  if (block >= unsigned(phase_times::kMaxBlocks)) return;
  const unsigned call = atomicAdd(&phase_log->calls[kernel][block], 1u);
  if (call >= unsigned(phase_times::kMaxCalls)) return;
  for (int p = 0; p < phase_times::kPhases; ++p)
    phase_log->ns[kernel][call][block][p] = phase_ns[p];
}

namespace {
// Registers this translation unit's symbol with phase_times::start at static initialisation.
struct PhaseLogRegistrar {
  PhaseLogRegistrar() {
    register_phase_log(
        [](phase_times::Log* log) { CUDA_CHECK(cudaMemcpyToSymbol(phase_log, &log, sizeof log)); });
  }
};
const PhaseLogRegistrar phase_log_registrar;
}  // namespace

}  // namespace gemm::detail

#define GEMM_PHASE_BEGIN(kernel) ::gemm::detail::phase_begin(::gemm::phase_times::Kernel::kernel)
#define GEMM_PHASE(phase) ::gemm::detail::phase_stamp(::gemm::phase_times::Phase::phase)
#define GEMM_PHASE_END() ::gemm::detail::phase_end()
// In a kernel that runs stamped device functions without recording them.
#define GEMM_PHASE_NONE() (threadIdx.x == 0 ? void(::gemm::detail::phase_kernel = 0) : void())
#else
#define GEMM_PHASE_BEGIN(kernel) ((void)0)
#define GEMM_PHASE(phase) ((void)0)
#define GEMM_PHASE_END() ((void)0)
#define GEMM_PHASE_NONE() ((void)0)
#endif
