// The production K loops of fast/warptile.cuh, built on step 7's cp.async pipeline
// (pipelined_k_loop, kernels/pipeline.cuh): one that prepares each K tile one tile ahead of its
// multiply, and one that also pipelines the shared-memory fragment reads. Production only: the
// ladder uses neither.
#pragma once

#include "kernels/pipeline.cuh"

namespace gemm::detail {

// The same loop with a step one K tile ahead: prepare(stage, kt) rewrites the landed buffer
// `stage` of tile kt into a form compute reads (fast/warptile.cuh transposes it into the kt % 2
// half of a double buffer), while compute(stage, kt) works on tile kt, prepared during the
// previous iteration.
// Still one barrier per K tile: it publishes the tile prepared before it and the buffer that has
// landed for the next preparation, and it separates each buffer's last read from its next write.
// The buffer being prepared (kt + 1) must not be the one being refilled (kt − 1): Stages ≥ 3,
// with Stages − 2 tiles in flight while one is prepared and one computed.
template <int Stages, class Load, class Prepare, class Compute>
__device__ __forceinline__ void pipelined_k_loop_ahead(int k_tiles, Load&& load, Prepare&& prepare,
                                                       Compute&& compute) {
  static_assert(Stages >= 3, "preparing one tile ahead needs at least three buffers");
#pragma unroll
  for (int s = 0; s < Stages - 1; ++s) {
    if (s < k_tiles) load(s, s);
    cp_async_commit();
  }
  cp_async_wait<Stages - 2>();  // tile 0
  __syncthreads();
  if (k_tiles > 0) prepare(0, 0);
  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<Stages - 3>();  // tile kt + 1
    __syncthreads();
    const int next = kt + Stages - 1;
    if (next < k_tiles) load(next % Stages, next);
    cp_async_commit();
    if (kt + 1 < k_tiles) prepare((kt + 1) % Stages, kt + 1);
    compute(kt % Stages, kt);
  }
}

// The multi-stage K loop with the shared-memory reads pipelined as well, as in CUTLASS's
// multistage main loop. A K tile is consumed in Steps steps; load_fragment(stage, step, buffer)
// reads step `step` of buffer `stage` into register fragment `buffer` (0 or 1) and fma(buffer)
// multiplies a fragment, so each step's FMAs run while the next step's fragment is in flight.
// The barrier comes before a tile's last step, once the whole tile is in registers: the next
// tile's first fragment is then read while that step's FMAs run, so a warp does not stall on
// shared memory after every barrier (which matters at 1–3 blocks per multiprocessor), and the
// tile's buffer is refilled at once, giving Stages tiles in flight rather than Stages − 1.
template <int Stages, int Steps, class Load, class LoadFragment, class Fma>
__device__ __forceinline__ void pipelined_k_loop_fragments(int k_tiles, Load&& load,
                                                           LoadFragment&& load_fragment,
                                                           Fma&& fma) {
  static_assert(Stages >= 2, "a pipeline needs at least two buffers");
  static_assert(Steps % 2 == 0, "an even number of steps puts every tile's step 0 in fragment 0");
#pragma unroll
  for (int s = 0; s < Stages; ++s) {
    if (s < k_tiles) load(s, s);
    cp_async_commit();
  }
  if (k_tiles <= 0) return;
  cp_async_wait<Stages - 1>();  // tile 0
  __syncthreads();
  load_fragment(0, 0, 0);
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int stage = kt % Stages;
#pragma unroll
    for (int step = 0; step < Steps - 1; ++step) {
      load_fragment(stage, step + 1, (step + 1) % 2);
      fma(step % 2);
    }
    cp_async_wait<Stages - 2>();  // tile kt + 1
    __syncthreads();              // … is published, and every thread has read all of tile kt
    if (kt + Stages < k_tiles) load(stage, kt + Stages);
    cp_async_commit();
    if (kt + 1 < k_tiles) load_fragment((kt + 1) % Stages, 0, 0);
    fma((Steps - 1) % 2);
  }
}

}  // namespace gemm::detail
