// The timing shared by the tuning sweeps (tune_tiles_main.cu, wgmma_tiles_main.cu).
#pragma once

#include <algorithm>
#include <vector>

#include "kernels/cuda_check.h"
#include "kernels/gemm.h"

// Median of 15 event-timed samples of `reps` back-to-back runs, after 3 warm-ups; ms per run.
inline float median_ms(gemm::LaunchFn launch, const gemm::Problem& p, int reps = 1) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < 3; ++i) launch(p, nullptr);
  std::vector<float> times;
  for (int i = 0; i < 15; ++i) {
    CUDA_CHECK(cudaEventRecord(start));
    for (int r = 0; r < reps; ++r) launch(p, nullptr);
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms / reps);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}
