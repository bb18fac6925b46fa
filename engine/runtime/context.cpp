// engine::Context (context.h): its construction on a device, the cuRAND generator, the GEMM calls
// and their timers, the epochs' timing. Streams and branches: context_streams.cpp; graph capture:
// context_graph.cpp.
#include "engine/runtime/context.h"

#include <algorithm>

#include "base/cuda_check.h"
#include "engine/runtime/curand_check.h"

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

void Context::synchronize() {
  if (is_cuda()) CUDA_CHECK(cudaStreamSynchronize(stream_));
}

}  // namespace engine
