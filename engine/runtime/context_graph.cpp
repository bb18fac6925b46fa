// engine::Context's CUDA graphs (context.h): a capture, the GEMM timers inside it, and CudaGraph.
#include <string>

#include "base/cuda_check.h"
#include "engine/runtime/context.h"

namespace engine {

CudaGraph Context::capture(const std::function<void()>& work) {
  if (!is_cuda()) throw Error("context: capture needs a cuda context");
  if (capturing_) throw Error("context: capture inside a capture");
  // Thread-local mode: other threads' CUDA calls cannot invalidate this capture.
  if (graph_gemm_timing_ && in_epoch_ && gemm_timing_)
    throw Error(
        "context: a timed capture inside a timed epoch (the graph's timers would overlap "
        "the epoch's); set_gemm_timing(false) first");
  CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  capturing_ = true;
  graph_calls_ = graph_gemm_timing_ ? 0 : -1;
  cudaGraph_t graph = nullptr;
  try {
    work();
  } catch (...) {
    capturing_ = false;
    graph_calls_ = -1;
    if (cudaStreamEndCapture(stream_, &graph) == cudaSuccess && graph) cudaGraphDestroy(graph);
    cudaGetLastError();  // the failed capture's error is the one being thrown
    throw;
  }
  capturing_ = false;
  CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
  try {
    if (capture_hook_) capture_hook_(graph);
  } catch (...) {
    cudaGraphDestroy(graph);
    throw;
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t err = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  CUDA_CHECK(err);
  return CudaGraph(exec);
}

double Context::graph_gemm_seconds() {
  if (graph_calls_ < 0) throw Error("context: no graph was captured with GEMM timing on");
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  double ms_total = 0.0;
  for (int i = 0; i < graph_calls_; ++i) {
    float ms = 0.0f;
    const cudaError_t err = cudaEventElapsedTime(&ms, gemm_start_[i], gemm_stop_[i]);
    if (err != cudaSuccess) {
      cudaGetLastError();  // not sticky: clear it, so that the next checked call does not see it
      throw Error(std::string("context: the GEMM events inside the graph cannot be timed (") +
                  cudaGetErrorString(err) + ")");
    }
    ms_total += ms;
  }
  return ms_total * 1e-3;
}

CudaGraph& CudaGraph::operator=(CudaGraph&& other) noexcept {
  if (this != &other) {
    if (exec_) cudaGraphExecDestroy(exec_);
    exec_ = other.exec_;
    other.exec_ = nullptr;
  }
  return *this;
}

CudaGraph::~CudaGraph() {
  if (exec_) cudaGraphExecDestroy(exec_);  // no throwing from a destructor
}

void CudaGraph::launch(cudaStream_t stream) const {
  if (!exec_) throw Error("cuda graph: launch of an empty graph");
  CUDA_CHECK(cudaGraphLaunch(exec_, stream));
}

}  // namespace engine
