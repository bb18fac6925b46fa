// GemmWorkspace.*: the scratch-memory hook (kernels/gemm.h, ScopedWorkspaceAllocator), which the
// PyTorch op uses to take scratch from PyTorch's caching allocator. With an allocator installed,
// the scratch of a call goes to it (split-K's partial sums in `fast`, the K-major copies of a
// large TN in `tf32x3_fast` on Hopper, cuBLAS's workspace) and the results pass the oracle; when
// the scope ends, the default comes back. A call captured into a CUDA graph (global capture mode,
// in which cudaMalloc fails) for a shape this process has not run takes its scratch from the
// installed allocator, and the replay is correct.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "base/device_buffer.h"
#include "gemm_harness.h"
#include "gpu_test.h"
#include "kernels/gemm.h"

namespace gemm_test {
namespace {

// Hands out cudaMalloc'd blocks (or, after reserve(), slices of one arena, as a capture needs),
// counting the requests; frees everything at the end of the test.
class CountingAllocator final : public gemm::WorkspaceAllocator {
 public:
  ~CountingAllocator() override {
    cudaDeviceSynchronize();
    for (void* block : blocks_) cudaFree(block);
  }
  void reserve(std::size_t bytes) {
    arena_ = gemm::DeviceBuffer<char>(bytes);
    arena_used_ = 0;
  }
  void* allocate(std::size_t bytes, cudaStream_t) override {
    ++requests;
    requested_bytes += bytes;
    if (arena_.size() > 0) {
      const std::size_t at = (arena_used_ + 255) / 256 * 256;
      if (at + bytes > arena_.size()) throw gemm::Error("CountingAllocator: arena too small");
      arena_used_ = at + bytes;
      return arena_.data() + at;
    }
    void* block = nullptr;
    CUDA_CHECK(cudaMalloc(&block, bytes));
    blocks_.push_back(block);
    return block;
  }
  int requests = 0;
  std::size_t requested_bytes = 0;

 private:
  std::vector<void*> blocks_;
  gemm::DeviceBuffer<char> arena_;
  std::size_t arena_used_ = 0;
};

Case nt_case(int m, int n, int k, std::uint64_t seed) {
  Case c;
  c.op_b = gemm::Op::T;
  c.m = m, c.n = n, c.k = k, c.seed = seed;
  return finished(c);
}

// Runs `cases` with `variant` under a counting allocator: every case passes the oracle and the
// scratch requests reach the allocator, at least `min_bytes` of them. Then, outside the scope, a
// run leaves the allocator untouched.
void expect_scratch_from_allocator(const char* name, const std::vector<Case>& cases,
                                   std::size_t min_bytes) {
  const gemm::Variant& variant = gemm::find_variant(name);
  VARIANT_TEST_OR_SKIP(variant);
  const Batch batch(cases);
  CountingAllocator allocator;
  {
    const gemm::ScopedWorkspaceAllocator scope(allocator);
    const std::vector<std::string> failures = run_and_check(variant, batch);
    EXPECT_TRUE(failures.empty()) << failures.front();
  }
  EXPECT_GT(allocator.requests, 0) << name << " asked the installed allocator for nothing";
  EXPECT_GE(allocator.requested_bytes, min_bytes);
  const int requests = allocator.requests;
  const std::vector<std::string> failures = run_and_check(variant, batch);
  EXPECT_TRUE(failures.empty()) << failures.front();
  EXPECT_EQ(allocator.requests, requests) << "the allocator was asked after its scope ended";
}

// 256×1024×784 NT, the default model's first forward GEMM: fast splits K in 7 slices on an H200,
// summed through the workspace (7 partial 256×1024 products).
TEST(GemmWorkspace, SplitKPartialSumsComeFromTheInstalledAllocator) {
  expect_scratch_from_allocator("fast", {nt_case(256, 1024, 784, 1)},
                                std::size_t(2) * 256 * 1024 * sizeof(float));
}

// A TN large enough for K-major copies (kernels/fast/k_major_copies.h): A is copied, M×K. Only
// the wgmma path copies; elsewhere tf32x3_fast runs step 10, which needs no scratch.
TEST(GemmWorkspace, KMajorCopiesComeFromTheInstalledAllocator) {
  GPU_TEST_OR_SKIP();
  if (const char* why = gemm::unavailable_reason(gemm::find_variant("wgmma"))) GTEST_SKIP() << why;
  Case tn;
  tn.op_a = gemm::Op::T;
  tn.m = 3601, tn.n = 3605, tn.k = 37, tn.seed = 2;
  expect_scratch_from_allocator("tf32x3_fast", {finished(tn)},
                                std::size_t(3601) * 37 * sizeof(float));
}

TEST(GemmWorkspace, CublasWorkspaceComesFromTheInstalledAllocator) {
  expect_scratch_from_allocator("cublas", {nt_case(200, 300, 100, 3)}, 1);
}

// A shape no other test of this process runs (split-K in fast), captured with scratch from a
// reserved arena; the graph's replay passes the oracle.
TEST(GemmWorkspace, CapturedCallTakesScratchFromTheInstalledAllocator) {
  const gemm::Variant& variant = gemm::find_variant("fast");
  VARIANT_TEST_OR_SKIP(variant);
  const Batch batch({nt_case(250, 1030, 790, 4)});
  gemm::DeviceBuffer<float> d(batch.size());
  d.upload(batch.input(), batch.size());
  CountingAllocator allocator;
  allocator.reserve(std::size_t(64) << 20);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  std::string error;
  try {
    const gemm::ScopedWorkspaceAllocator scope(allocator);
    gemm::run(variant, problem_of(batch.cases()[0], batch.placements()[0], d.data()), stream);
  } catch (const std::exception& e) {
    error = e.what();
  }
  const cudaError_t end = cudaStreamEndCapture(stream, &graph);
  ASSERT_TRUE(error.empty()) << "the call failed inside the capture: " << error;
  ASSERT_EQ(end, cudaSuccess) << cudaGetErrorString(end);
  EXPECT_GT(allocator.requests, 0);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  std::vector<float> out(batch.size());
  d.download(out.data(), out.size());
  EXPECT_EQ(check_case(batch, 0, out.data(), gemm::tolerance(variant.precision)), "");
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace gemm_test
