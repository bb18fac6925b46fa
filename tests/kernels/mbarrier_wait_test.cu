// The pipelines' mbarrier_wait (kernels/tma.cuh) is bounded: a phase that completes is waited for
// as before, and one that never completes traps the kernel after its limit (10 s), so that the
// launch fails with an error instead of hanging. Each test runs as its own process (ctest), since
// a trapped kernel leaves the context unusable. Needs an sm_90a GPU, else skips.
//
// Test names: MbarrierWait.*
#include <gtest/gtest.h>

#include <chrono>

#include "base/cuda_check.h"
#include "gpu_test.h"
#include "kernels/launchers.h"
#include "kernels/tma.cuh"

namespace {

// One mbarrier expecting `arrivals`; thread 0 arrives once and waits for the phase.
__global__ void wait_for_phase_kernel(int arrivals, int* waited) {
  __shared__ uint64_t bar;
  gemm::detail::mbarrier_init(&bar, arrivals);
  gemm::detail::fence_mbarrier_init();
  gemm::detail::mbarrier_arrive(&bar);
  gemm::detail::mbarrier_wait(&bar, 0);
  *waited = 1;
}

// Runs the kernel on one thread; the error its launch ends with, and *waited.
cudaError_t wait_for_phase(int arrivals, int& waited) {
  int* flag = nullptr;
  CUDA_CHECK(cudaMalloc(&flag, sizeof(int)));
  CUDA_CHECK(cudaMemset(flag, 0, sizeof(int)));
  wait_for_phase_kernel<<<1, 1>>>(arrivals, flag);
  CUDA_CHECK(cudaGetLastError());
  const cudaError_t result = cudaDeviceSynchronize();
  waited = 0;
  if (result == cudaSuccess)
    CUDA_CHECK(cudaMemcpy(&waited, flag, sizeof(int), cudaMemcpyDeviceToHost));
  return result;
}

TEST(MbarrierWait, ACompletedPhaseIsWaitedFor) {
  GPU_TEST_OR_SKIP();
  if (const char* why = gemm::detail::wgmma_unavailable()) GTEST_SKIP() << why;
  int waited = 0;
  EXPECT_EQ(wait_for_phase(1, waited), cudaSuccess);
  EXPECT_EQ(waited, 1);
}

TEST(MbarrierWait, APhaseThatNeverCompletesFailsTheLaunch) {
  GPU_TEST_OR_SKIP();
  if (const char* why = gemm::detail::wgmma_unavailable()) GTEST_SKIP() << why;
  const auto start = std::chrono::steady_clock::now();
  int waited = 0;
  const cudaError_t result = wait_for_phase(2, waited);  // one arrival of two: never completes
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(result, cudaSuccess) << "the wait returned";
  EXPECT_EQ(waited, 0);
  EXPECT_GE(seconds, 9.0) << "trapped before the limit";
  EXPECT_LT(seconds, 60.0);
}

}  // namespace
