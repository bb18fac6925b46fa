// engine/runtime/graph_topology.h on the GPU: a capture that forks onto a side stream and joins it
// again with events, read back through Context::set_capture_hook; a hook that throws fails the
// capture.
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>

#include "base/cuda_check.h"
#include "engine/engine.h"
#include "expect_error.h"
#include "gpu_test.h"

namespace {

__global__ void topology_first(float* x) { x[threadIdx.x] += 1.0f; }
__global__ void topology_side(float* x) { x[threadIdx.x] *= 2.0f; }
__global__ void topology_main(float* x) { x[threadIdx.x] += 3.0f; }
__global__ void topology_join(float* x) { x[threadIdx.x] += x[256 + threadIdx.x]; }

TEST(GraphTopologyGpu, ForkedBranchesAreEdgesOfTheKernels) {
  GPU_TEST_OR_SKIP();
  engine::Context ctx(engine::Device::CUDA, 1);
  float* buf = nullptr;
  CUDA_CHECK(cudaMalloc(&buf, 1024 * sizeof(float)));
  CUDA_CHECK(cudaMemset(buf, 0, 1024 * sizeof(float)));
  cudaStream_t side = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  std::optional<engine::GraphTopology> seen;
  ctx.set_capture_hook([&](cudaGraph_t graph) { seen = engine::graph_topology(graph); });
  const auto step = [&] {
    cudaStream_t main = ctx.stream();
    topology_first<<<2, 32, 0, main>>>(buf);
    CUDA_CHECK(cudaEventRecord(fork, main));
    CUDA_CHECK(cudaStreamWaitEvent(side, fork, 0));
    topology_side<<<3, 64, 0, side>>>(buf + 256);
    CUDA_CHECK(cudaMemsetAsync(buf + 512, 0, 64 * sizeof(float), main));
    topology_main<<<4, 32, 0, main>>>(buf + 512);
    CUDA_CHECK(cudaEventRecord(join, side));
    CUDA_CHECK(cudaStreamWaitEvent(main, join, 0));
    topology_join<<<1, 128, 0, main>>>(buf);
  };
  engine::CudaGraph graph = ctx.capture(step);
  graph.launch(ctx.stream());
  ctx.synchronize();
  ASSERT_TRUE(seen.has_value());
  const engine::GraphTopology& t = *seen;
  ASSERT_EQ(t.kernels.size(), 4u);
  const char* names[] = {"topology_first", "topology_side", "topology_main", "topology_join"};
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(names[i]);
    EXPECT_NE(t.kernels[i].name.find(std::string(names[i]) + "(float*)"), std::string::npos)
        << t.kernels[i].name;
    EXPECT_NE(t.kernels[i].mangled.find(std::to_string(std::string(names[i]).size()) + names[i]),
              std::string::npos)
        << t.kernels[i].mangled;
  }
  EXPECT_EQ(t.kernels[1].grid, (std::array<unsigned, 3>{3, 1, 1}));
  EXPECT_EQ(t.kernels[1].block, (std::array<unsigned, 3>{64, 1, 1}));
  EXPECT_EQ(t.kernels[3].block, (std::array<unsigned, 3>{128, 1, 1}));
  // first -> side and first -> main (through the memset); both -> join.
  const std::vector<std::pair<int, int>> edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
  EXPECT_EQ(t.edges, edges);
  EXPECT_EQ(t.other_nodes, (std::map<std::string, int>{{"memset", 1}}));
  const std::string json = engine::topology_json(t);
  EXPECT_NE(json.find("\"edges\""), std::string::npos) << json;

  // A hook that throws fails the capture, which leaves the stream usable.
  ctx.set_capture_hook([](cudaGraph_t) { throw std::runtime_error("hook says no"); });
  EXPECT_THROW_WITH(ctx.capture(step), std::runtime_error, "hook says no");
  ctx.set_capture_hook(nullptr);
  seen.reset();
  engine::CudaGraph again = ctx.capture(step);
  again.launch(ctx.stream());
  ctx.synchronize();
  EXPECT_FALSE(seen.has_value());

  CUDA_CHECK(cudaEventDestroy(fork));
  CUDA_CHECK(cudaEventDestroy(join));
  CUDA_CHECK(cudaStreamDestroy(side));
  CUDA_CHECK(cudaFree(buf));
}

}  // namespace
