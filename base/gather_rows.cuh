// One batch's rows gathered from a gemm_mlp::BatchSource (base/batch_source.h), as the data
// loader's kernels (data/loader.cu) run it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "base/batch_source.h"

namespace gemm_mlp {

// Rows [row0, row0 + rows) of batch `batch` (those it has) into x (row r at x + r·features) and
// their labels into y, by `threads` threads (whole warps) of which this is `thread`. A row a warp
// at a time: 16-byte loads where the images and x allow them, kInFlight of them a lane issued
// before their stores (the rows come from anywhere in the set: it is the loads' latency that
// counts).
__device__ __forceinline__ void gather_rows(const BatchSource& s, int64_t batch, int row0, int rows,
                                            float* __restrict__ x, int32_t* __restrict__ y,
                                            int thread, int threads) {
  constexpr int kGroup = 32;
  const BatchRows b = batch_rows(s, batch);
  const int end = row0 + rows < b.size ? row0 + rows : b.size;
  const int lane = thread % kGroup, groups = threads / kGroup;
  const bool vec4 = s.features % 4 == 0 && reinterpret_cast<uintptr_t>(s.images) % 16 == 0 &&
                    reinterpret_cast<uintptr_t>(x) % 16 == 0;
  for (int r = row0 + thread / kGroup; r < end; r += groups) {
    const int64_t src = __ldg(s.order + b.first + r);
    if (lane == 0) y[r] = __ldg(s.labels + src);
    if (vec4) {
      constexpr int kInFlight = 4;  // float4s a thread loads before it stores them
      const float4* from = reinterpret_cast<const float4*>(s.images + src * s.features);
      float4* to = reinterpret_cast<float4*>(x + static_cast<int64_t>(r) * s.features);
      const int quads = s.features / 4;
      for (int q0 = lane; q0 < quads; q0 += kGroup * kInFlight) {
        float4 v[kInFlight];
#pragma unroll
        for (int i = 0; i < kInFlight; ++i)
          if (q0 + i * kGroup < quads) v[i] = __ldg(from + q0 + i * kGroup);
#pragma unroll
        for (int i = 0; i < kInFlight; ++i)
          if (q0 + i * kGroup < quads) to[q0 + i * kGroup] = v[i];
      }
    } else {
      const float* from = s.images + src * s.features;
      float* to = x + static_cast<int64_t>(r) * s.features;
      for (int f = lane; f < s.features; f += kGroup) to[f] = __ldg(from + f);
    }
  }
}

}  // namespace gemm_mlp
