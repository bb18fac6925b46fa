#include "engine/context.h"

#include <algorithm>

#include "engine/checks.h"
#include "base/cuda_check.h"

namespace engine {

namespace {

const gemm::Variant& checked_variant(Device device, const gemm::Variant& v) {
  const bool host_variant = v.device == Device::CPU;
  if (device == Device::CPU && !host_variant)
    throw Error(std::string("context: GEMM variant '") + v.name +
                "' runs on the GPU, but the context's device is cpu (use a host variant, e.g. "
                "'cpu')");
  if (device == Device::CUDA && host_variant)
    throw Error(std::string("context: GEMM variant '") + v.name +
                "' runs on the host, but the context's device is cuda (use a device variant, "
                "e.g. 'vec')");
  return v;
}

}  // namespace

Context::Context(uint64_t seed) : Context(gemm_mlp::resolve_device("auto"), seed) {}

Context::Context(Device device, uint64_t seed)
    : Context(device, device == Device::CUDA ? "auto" : "cpu", seed) {}

Context::Context(Device device, const std::string& variant_name, uint64_t seed)
    : Context(device, gemm::find_variant(variant_name), seed) {}

Context::Context(Device device, const gemm::Variant& variant, uint64_t seed)
    : device_(device), variant_(&checked_variant(device, variant)), seed_(seed), host_rng_(seed) {
  if (device_ != Device::CUDA) return;
  if (!gemm_mlp::cuda_device_available())
    throw Error("context: device cuda requested, but no usable CUDA device was found");
  // Blocking streams (not cudaStreamNonBlocking): they wait for work on the legacy default stream,
  // such as the cudaMemset that zero-fills new tensors. The main stream holds a step's longest
  // chain (forward, loss, input gradients), so it gets the higher priority: its kernels take free
  // multiprocessors before a side stream's.
  int least_priority = 0, greatest_priority = 0;
  CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least_priority, &greatest_priority));
  CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamDefault, greatest_priority));
  try {
    CURAND_CHECK(curandCreateGenerator(&curand_, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(curand_, seed));
    CURAND_CHECK(curandSetStream(curand_, stream_));
    CUDA_CHECK(cudaEventCreate(&epoch_start_));
    CUDA_CHECK(cudaEventCreate(&epoch_stop_));
    // Fork and join marks only order streams: no timing, so they cost less to record.
    CUDA_CHECK(cudaEventCreateWithFlags(&fork_mark_, cudaEventDisableTiming));
    for (int s = 0; s < kSideStreams; ++s) {
      CUDA_CHECK(
          cudaStreamCreateWithPriority(&side_streams_[s], cudaStreamDefault, least_priority));
      CUDA_CHECK(cudaEventCreateWithFlags(&side_marks_[s], cudaEventDisableTiming));
    }
  } catch (...) {
    destroy();  // a throwing constructor gets no destructor call: free what was created
    throw;
  }
}

Context::~Context() { destroy(); }

void Context::destroy() noexcept {
  // Destroy calls can fail only if the device is already broken; nothing to do about it here.
  for (cudaEvent_t e : gemm_start_) cudaEventDestroy(e);
  for (cudaEvent_t e : gemm_stop_) cudaEventDestroy(e);
  gemm_start_.clear();
  gemm_stop_.clear();
  if (epoch_start_) cudaEventDestroy(epoch_start_);
  if (epoch_stop_) cudaEventDestroy(epoch_stop_);
  epoch_start_ = epoch_stop_ = nullptr;
  for (int s = 0; s < kSideStreams; ++s) {
    if (side_marks_[s]) cudaEventDestroy(side_marks_[s]);
    if (side_streams_[s]) cudaStreamDestroy(side_streams_[s]);
    side_marks_[s] = nullptr;
    side_streams_[s] = nullptr;
  }
  if (fork_mark_) cudaEventDestroy(fork_mark_);
  fork_mark_ = nullptr;
  if (curand_) curandDestroyGenerator(curand_);
  curand_ = nullptr;
  if (stream_) cudaStreamDestroy(stream_);
  stream_ = nullptr;
}

curandGenerator_t Context::curand() {
  if (!is_cuda()) throw Error("context: the cuRAND generator exists only in a cuda context");
  return curand_;
}

void Context::gemm(const gemm::Problem& p) {
  cudaStream_t queue = stream();
  if (capturing_ && graph_calls_ >= 0) {  // event-record nodes in the graph
    const int i = graph_calls_++;
    if (i >= static_cast<int>(gemm_start_.size()))
      throw Error("context: a timed capture needs more GEMM timers than reserve_gemm_timers gave");
    // External: a real record node, not the capture's internal cross-stream dependency.
    CUDA_CHECK(cudaEventRecordWithFlags(gemm_start_[i], queue, cudaEventRecordExternal));
    gemm::run(*variant_, p, queue);
    CUDA_CHECK(cudaEventRecordWithFlags(gemm_stop_[i], queue, cudaEventRecordExternal));
    return;
  }
  if (!in_epoch_ || capturing_ || !gemm_timing_) {  // untimed: counted nowhere
    gemm::run(*variant_, p, queue);
    return;
  }
  const int i = calls_++;
  if (!is_cuda()) {
    const Clock::time_point t0 = Clock::now();
    gemm::run(*variant_, p, queue);
    host_gemm_s_ += std::chrono::duration<double>(Clock::now() - t0).count();
    return;
  }
  const bool timed = i < static_cast<int>(gemm_start_.size());
  if (timed) CUDA_CHECK(cudaEventRecord(gemm_start_[i], queue));
  gemm::run(*variant_, p, queue);
  if (timed) CUDA_CHECK(cudaEventRecord(gemm_stop_[i], queue));
}

void Context::reserve_gemm_timers(int calls) {
  if (in_epoch_) throw Error("context: reserve_gemm_timers inside an epoch (it allocates)");
  if (!is_cuda()) return;
  while (static_cast<int>(gemm_start_.size()) < calls) {
    cudaEvent_t start = nullptr, stop = nullptr;
    CUDA_CHECK(cudaEventCreate(&start));
    const cudaError_t err = cudaEventCreate(&stop);
    if (err != cudaSuccess) cudaEventDestroy(start);
    CUDA_CHECK(err);
    gemm_start_.push_back(start);
    gemm_stop_.push_back(stop);
  }
}

Context::Branches::Branches(Context& ctx) : ctx_(ctx) {
  if (ctx.branches_open_) throw Error("context: Branches inside Branches");
  ctx.branches_open_ = true;
  ctx.next_side_ = 0;  // the same side streams in every step: their workspaces already exist
}

Context::Branches::~Branches() {
  try {
    ctx_.join();
  } catch (...) {  // a destructor must not throw; the error stays for the next checked call
  }
  ctx_.branches_open_ = false;
  ctx_.current_ = 0;
}

int Context::fork() {
  if (!branches_open_ || !is_cuda()) return 0;
  const int side = next_side_;
  next_side_ = (next_side_ + 1) % kSideStreams;
  CUDA_CHECK(cudaEventRecord(fork_mark_, stream()));
  CUDA_CHECK(cudaStreamWaitEvent(side_streams_[side], fork_mark_, 0));
  forked_ |= 1u << side;
  return side + 1;
}

int Context::fork_after_all() {
  const unsigned earlier = forked_;
  const int side = fork();
  if (side == 0) return 0;
  for (int s = 0; s < kSideStreams; ++s) {
    if (!(earlier & (1u << s)) || s == side - 1) continue;
    CUDA_CHECK(cudaEventRecord(side_marks_[s], side_streams_[s]));
    CUDA_CHECK(cudaStreamWaitEvent(side_streams_[side - 1], side_marks_[s], 0));
  }
  return side;
}

void Context::follow_main(int side) {
  if (side == 0) return;
  if (!forked(side))
    throw Error("context: follow_main(" + std::to_string(side) + ") of a stream not forked");
  CUDA_CHECK(cudaEventRecord(fork_mark_, stream_));
  CUDA_CHECK(cudaStreamWaitEvent(side_streams_[side - 1], fork_mark_, 0));
}

void Context::on(int side, const std::function<void()>& work) {
  if (!forked(side))
    throw Error("context: on(" + std::to_string(side) + ") of a stream not forked");
  const int outer = current_;
  current_ = side;
  try {
    work();
  } catch (...) {
    current_ = outer;
    throw;
  }
  current_ = outer;
}

void Context::join() {
  for (int s = 0; s < kSideStreams; ++s) {
    if (!(forked_ & (1u << s))) continue;
    CUDA_CHECK(cudaEventRecord(side_marks_[s], side_streams_[s]));
    CUDA_CHECK(cudaStreamWaitEvent(stream_, side_marks_[s], 0));
  }
  forked_ = 0;
}

void Context::begin_epoch() {
  if (in_epoch_) throw Error("context: begin_epoch while an epoch is running");
  reserve_gemm_timers(most_calls_);  // grow to what the largest epoch so far needed
  calls_ = 0;
  host_gemm_s_ = 0.0;
  in_epoch_ = true;
  if (is_cuda())
    CUDA_CHECK(cudaEventRecord(epoch_start_, stream_));
  else
    host_epoch_start_ = Clock::now();
}

EpochTimes Context::end_epoch() {
  if (!in_epoch_) throw Error("context: end_epoch without begin_epoch");
  in_epoch_ = false;
  most_calls_ = std::max(most_calls_, calls_);
  EpochTimes t;
  t.gemm_calls = calls_;
  if (!is_cuda()) {
    t.epoch_s = std::chrono::duration<double>(Clock::now() - host_epoch_start_).count();
    t.gemm_s = host_gemm_s_;
    return t;
  }
  CUDA_CHECK(cudaEventRecord(epoch_stop_, stream_));
  CUDA_CHECK(cudaEventSynchronize(epoch_stop_));  // the epoch's one wait
  float ms = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, epoch_start_, epoch_stop_));
  t.epoch_s = ms * 1e-3;
  const int timed = std::min(calls_, static_cast<int>(gemm_start_.size()));
  double gemm_ms = 0.0;
  for (int i = 0; i < timed; ++i) {
    CUDA_CHECK(cudaEventElapsedTime(&ms, gemm_start_[i], gemm_stop_[i]));
    gemm_ms += ms;
  }
  t.gemm_s = gemm_ms * 1e-3;
  t.gemm_untimed = calls_ - timed;
  return t;
}

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

void Context::synchronize() {
  if (is_cuda()) CUDA_CHECK(cudaStreamSynchronize(stream_));
}

}  // namespace engine
