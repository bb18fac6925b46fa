// The one GPU timing harness, shared by gemm_bench and the tune programs (tools/tune/), so that a
// sweep and the benchmark measure alike: the header-only part of gemm_bench_common.
//
// Method:
//   - Every run is timed on its own, by a pair of CUDA events around the launch on the stream.
//   - Before each run, outside the timed region: the caller's `prepare` (e.g. poisoning C, so stale
//     results cannot help), then a write of a buffer twice the L2 size (at least 64 MiB), so every
//     run starts with a cold L2. The write also keeps the GPU busy while the host queues the start
//     event and the launch, so host launch overhead does not leak into the timing.
//   - Warm-up runs first (time_once, results dropped), then the timed runs.
//   - The summary: median, minimum and 90th percentile of the timed runs.
// Warm (time_warm), as a training step runs its GEMMs: `calls` back-to-back launches captured in
// one CUDA graph (dependent launches keep their programmatic edges), replayed with the operands
// warm in L2 and no flush, C not poisoned between calls; each replay timed by events, the time per
// call its time over `calls`.
// cuBLAS is timed the same way beside the kernels, in the same process, by every caller.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <vector>

#include "base/cuda_check.h"
#include "base/device_buffer.h"

namespace bench {

// gemm_bench's defaults (--warmup, --reps), which the tune programs use too.
constexpr int kDefaultWarmup = 5;
constexpr int kDefaultRuns = 30;
// gemm_bench's warm defaults (--warm-calls, --warm-replays): 20 calls a graph, 15 timed replays.
constexpr int kDefaultWarmCalls = 20;
constexpr int kDefaultWarmReplays = 15;

struct Timing {
  int runs = 0;
  double median_ms = NAN, min_ms = NAN, p90_ms = NAN;
};

// The median (the mean of the middle two for an even count), minimum and 90th percentile (nearest
// rank) of run times in milliseconds; all NaN for none.
inline Timing summarize(std::vector<double> ms) {
  Timing t;
  t.runs = int(ms.size());
  if (ms.empty()) return t;
  std::sort(ms.begin(), ms.end());
  const std::size_t n = ms.size();
  t.min_ms = ms.front();
  t.median_ms = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  t.p90_ms = ms[std::min(n - 1, std::size_t(std::ceil(0.9 * double(n))) - 1)];
  return t;
}

class Timer {
 public:
  using Step = std::function<void()>;

  // Times work queued on `stream`, on the current device.
  explicit Timer(cudaStream_t stream) : stream_(stream), flush_(flush_bytes_for_current_device()) {}

  cudaStream_t stream() const { return stream_; }
  std::size_t flush_bytes() const { return flush_.bytes(); }

  // One run of `launch` (which must queue its work on stream()), after `prepare` and the L2
  // flush; its time in milliseconds.
  double time_once(const Step& launch, const Step& prepare = {}) {
    if (prepare) prepare();
    flush_.fill_bytes(0, stream_);
    CUDA_CHECK(cudaEventRecord(start_.event, stream_));
    launch();
    CUDA_CHECK(cudaEventRecord(stop_.event, stream_));
    CUDA_CHECK(cudaEventSynchronize(stop_.event));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_.event, stop_.event));
    return double(ms);
  }

  // `warmup` untimed runs, then `runs` timed ones, each as time_once.
  Timing time(const Step& launch, const Step& prepare = {}, int warmup = kDefaultWarmup,
              int runs = kDefaultRuns) {
    for (int i = 0; i < warmup; ++i) time_once(launch, prepare);
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) ms.push_back(time_once(launch, prepare));
    return summarize(std::move(ms));
  }

  // `launch` called `calls` times back to back inside one captured CUDA graph; two untimed
  // replays, then `replays` timed ones. The timing is per call: a replay's time over `calls`.
  // Every call must be capturable (no allocation, no synchronisation): run it once uncaptured
  // first, so that its workspaces exist.
  Timing time_warm(const Step& launch, int calls, int replays) {
    WarmGraph graph(stream_, launch, calls);
    for (int i = 0; i < 2; ++i) CUDA_CHECK(cudaGraphLaunch(graph.exec, stream_));
    std::vector<double> ms;
    for (int i = 0; i < replays; ++i) {
      CUDA_CHECK(cudaEventRecord(start_.event, stream_));
      CUDA_CHECK(cudaGraphLaunch(graph.exec, stream_));
      CUDA_CHECK(cudaEventRecord(stop_.event, stream_));
      CUDA_CHECK(cudaEventSynchronize(stop_.event));
      float replay_ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&replay_ms, start_.event, stop_.event));
      ms.push_back(double(replay_ms) / calls);
    }
    return summarize(std::move(ms));
  }

  // `calls` launches captured from `stream` and instantiated; a capture that a launch broke is
  // ended before the error propagates, so the stream stays usable.
  struct WarmGraph {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    WarmGraph(cudaStream_t stream, const Step& launch, int calls) {
      CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      try {
        for (int i = 0; i < calls; ++i) launch();
      } catch (...) {
        cudaStreamEndCapture(stream, &graph);
        if (graph) cudaGraphDestroy(graph);
        cudaGetLastError();
        throw;
      }
      CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
      CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    }
    ~WarmGraph() {
      if (exec) cudaGraphExecDestroy(exec);
      if (graph) cudaGraphDestroy(graph);
    }
    WarmGraph(const WarmGraph&) = delete;
    WarmGraph& operator=(const WarmGraph&) = delete;
  };

 private:
  struct Event {
    cudaEvent_t event = nullptr;
    Event() { CUDA_CHECK(cudaEventCreate(&event)); }
    ~Event() { cudaEventDestroy(event); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
  };

  static std::size_t flush_bytes_for_current_device() {
    int device = 0, l2_bytes = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    return std::max<std::size_t>(2 * std::size_t(std::max(0, l2_bytes)), std::size_t(64) << 20);
  }

  cudaStream_t stream_;
  gemm::DeviceBuffer<unsigned char> flush_;
  Event start_, stop_;
};

}  // namespace bench
