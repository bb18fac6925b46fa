// Context: everything an op needs besides its tensors.
//
//   device      CPU or CUDA; every tensor an op touches must live there
//   stream      the one CUDA stream all engine work is queued on (CUDA only)
//   generators  a seeded cuRAND Philox generator on that stream (CUDA), std::mt19937_64 (CPU)
//   variant     the gemm::Variant that computes every matrix product; its device must match the
//               context's (a host variant in a CUDA context, or the reverse, is an error)
//   timers      epoch time and GEMM time, split without host synchronisation inside the step
//
// Timing on CUDA: every GEMM the engine runs is bracketed by a pair of CUDA events taken from a
// pool allocated outside the training step. begin_epoch()/end_epoch() record the epoch's own pair;
// end_epoch() waits for the stream once and sums the GEMM intervals. If an epoch needs more pairs
// than the pool holds, the extra GEMMs run untimed (counted in EpochTimes::gemm_untimed) and the
// pool grows at the next begin_epoch(), i.e. only between epochs. On the CPU std::chrono is used.
// set_gemm_timing(false) leaves the GEMMs unbracketed (the timed epochs of a trainer that replays
// a captured graph; their GEMM time is measured in a separate, profiled pass instead).
//
// In a capture with set_graph_gemm_timing(true), each GEMM is bracketed by event-record nodes from
// the same pool, so every replay of the graph records them; graph_gemm_seconds() reads them once
// the replay has finished. Inside a graph the kernels run back to back, so these intervals hold
// no launch gaps.
//
// Capture: capture(work) records what `work` queues on the stream as a CUDA graph instead of
// running it, and returns it instantiated; CudaGraph::launch replays it with one call.
//
// Branches: a step's independent work (a layer's weight gradient beside its input gradient, an
// optimiser update beside the next layer's backward) runs on side streams, so that the step's
// time is its longest chain of dependent kernels, not the sum of them all. While a Branches
// object lives, fork() hands out a side stream that starts where the current stream is, on(s, f)
// queues f's work there, and join() makes the main stream wait for every side stream used; the
// object's end joins too. A capture records the fork and join as graph edges, so the graph has
// the same branches. Outside a Branches scope, and on the CPU, fork() returns the main stream
// (0) and everything runs in the order it was queued.
#pragma once

#include <cuda_runtime_api.h>
#include <curand.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "engine/runtime/tensor.h"
#include "kernels/gemm.h"

namespace engine {

struct EpochTimes {
  double epoch_s = 0.0;  // from begin_epoch() to end_epoch(), as the device saw it
  double gemm_s = 0.0;   // sum over the timed GEMM calls
  int gemm_calls = 0;    // every GEMM run in the epoch
  int gemm_untimed = 0;  // calls that found the event pool empty (0 once the pool has grown)
};

// An instantiated CUDA graph (see Context::capture). Move-only; empty when default-constructed.
class CudaGraph {
 public:
  CudaGraph() = default;
  explicit CudaGraph(cudaGraphExec_t exec) : exec_(exec) {}
  CudaGraph(CudaGraph&& other) noexcept : exec_(other.exec_) { other.exec_ = nullptr; }
  CudaGraph& operator=(CudaGraph&& other) noexcept;
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;
  ~CudaGraph();

  explicit operator bool() const { return exec_ != nullptr; }
  void launch(cudaStream_t stream) const;  // queues one replay

 private:
  cudaGraphExec_t exec_ = nullptr;
};

class Context {
 public:
  // The device resolve_device("auto") picks (the GPU when one is usable), with `auto` there (per
  // shape, the fastest fp32 kernel of this project measured there); else the CPU with `cpu`
  // (OpenBLAS).
  explicit Context(uint64_t seed);
  // That device's default variant: `auto` on CUDA, `cpu` on the CPU.
  Context(Device device, uint64_t seed);
  Context(Device device, const gemm::Variant& variant, uint64_t seed);
  Context(Device device, const std::string& variant_name, uint64_t seed);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  Device device() const { return device_; }
  bool is_cuda() const { return device_ == Device::CUDA; }
  const gemm::Variant& variant() const { return *variant_; }
  uint64_t seed() const { return seed_; }
  // The stream ops queue on: the main stream, or the side stream of an on() call (nullptr on the
  // CPU).
  cudaStream_t stream() const { return current_ == 0 ? stream_ : side_streams_[current_ - 1]; }
  curandGenerator_t curand();  // throws on the CPU
  std::mt19937_64& host_rng() { return host_rng_; }

  // The engine's one way to multiply matrices: gemm::run with the chosen variant on the stream,
  // timed as described above.
  void gemm(const gemm::Problem& p);

  // Makes sure the next epochs can time `calls` GEMMs each. Allocates; call between epochs.
  void reserve_gemm_timers(int calls);
  void set_gemm_timing(bool on) { gemm_timing_ = on; }
  // Whether later captures bracket their GEMMs with event nodes (off by default).
  void set_graph_gemm_timing(bool on) { graph_gemm_timing_ = on; }
  // The GEMM time of the last replay of the last graph captured with graph GEMM timing on; waits
  // for the stream. Throws gemm_mlp::Error if there is none, or if the driver cannot time events
  // recorded inside a graph.
  double graph_gemm_seconds();

  // CUDA only: runs `work` with the stream in capture mode, so that what it queues is recorded,
  // not run, and returns the graph. Anything that would allocate or wait inside `work` makes the
  // capture fail: then the stream is left usable and the error is thrown.
  CudaGraph capture(const std::function<void()>& work);
  // Called by capture() with each captured graph before it is instantiated (e.g. to read its
  // topology: engine/runtime/graph_topology.h); what it throws fails the capture. Empty: none.
  void set_capture_hook(std::function<void(cudaGraph_t)> hook) { capture_hook_ = std::move(hook); }

  // Branches (see the header comment). A stream is named by an index: 0 is the main stream,
  // 1..kSideStreams the side streams.
  static constexpr int kSideStreams = 8;
  class Branches {
   public:
    explicit Branches(Context& ctx);
    ~Branches();  // joins (a failure there is left for the next checked CUDA call to report)
    Branches(const Branches&) = delete;
    Branches& operator=(const Branches&) = delete;

   private:
    Context& ctx_;
  };
  // A side stream that first waits for the work queued so far on the current stream; side
  // streams are handed out in turn, the same ones in every step. 0 outside a Branches scope.
  int fork();
  // The same, but the side stream also waits for the work queued so far on every side stream
  // forked since the last join: for work that must follow everything queued so far without
  // holding up what is queued after it. 0 outside a Branches scope.
  int fork_after_all();
  // Side stream `side` also waits for the work queued so far on the main stream (no-op for 0).
  void follow_main(int side);
  // Whether side stream `side` was forked since the last join (true for 0, the main stream).
  bool forked(int side) const {
    return side == 0 || (side > 0 && side <= kSideStreams && (forked_ & (1u << (side - 1))));
  }
  // Runs `work` with stream `side` current, so that the ops it queues go there.
  void on(int side, const std::function<void()>& work);
  // The main stream waits for the work queued so far on every side stream forked since the last
  // join().
  void join();

  void begin_epoch();
  EpochTimes end_epoch();  // waits for the stream once

  void synchronize();  // waits for all queued work (no-op on the CPU)

 private:
  void destroy() noexcept;

  using Clock = std::chrono::steady_clock;

  Device device_;
  const gemm::Variant* variant_;
  uint64_t seed_;
  cudaStream_t stream_ = nullptr;
  curandGenerator_t curand_ = nullptr;
  std::mt19937_64 host_rng_;

  // Branches.
  cudaStream_t side_streams_[kSideStreams] = {};
  cudaEvent_t fork_mark_ = nullptr;            // recorded where a side stream starts
  cudaEvent_t side_marks_[kSideStreams] = {};  // recorded on a side stream for a join
  bool branches_open_ = false;                 // inside a Branches scope
  int current_ = 0;                            // the stream stream() returns
  int next_side_ = 0;                          // the side stream the next fork() takes
  unsigned forked_ = 0;                        // bit s: side stream s+1 awaits a join

  // Timers.
  bool gemm_timing_ = true;
  bool graph_gemm_timing_ = false;
  bool capturing_ = false;
  int graph_calls_ = -1;  // GEMMs bracketed in the last timed capture; -1: none
  std::function<void(cudaGraph_t)> capture_hook_;
  bool in_epoch_ = false;
  int calls_ = 0;                                    // GEMMs run since begin_epoch()
  int most_calls_ = 0;                               // the largest number of GEMMs any epoch needed
  std::vector<cudaEvent_t> gemm_start_, gemm_stop_;  // the pool: one pair per timed GEMM
  cudaEvent_t epoch_start_ = nullptr, epoch_stop_ = nullptr;
  Clock::time_point host_epoch_start_;
  double host_gemm_s_ = 0.0;
};

}  // namespace engine
