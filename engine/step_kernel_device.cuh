// The step kernel's device side (step_kernel.h): what one launch reads, the waits on the
// counters and the signals, each kind of unit's work, and the persistent kernel that runs a plan's
// units. Included by engine/step_kernel.cu alone, whose host side launches it; sm_90a only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cuda/atomic>

#include "engine/backend.h"
#include "engine/loss_rows.cuh"
#include "engine/step_kernel.h"
#include "engine/step_plan.h"
#include "kernels/fast/step_tile.cuh"

namespace engine {

namespace {  // one translation unit: step_kernel.cu

using gemm::step_tile::Arithmetic;
using gemm::step_tile::NtGemm;
using gemm::step_tile::Tile;
using step_plan::Kind;
using step_plan::Part;
using step_plan::Unit;
using step_plan::Wait;

constexpr int kMaxLayers = StepKernel::kMaxLayers;
constexpr int kLossRows = 128;  // rows per Loss unit

// Where a launch gave up: the first wait past its time limit (failed = 1), in a batch of `batch`
// rows. Sticky until check() reads it.
struct WaitFailure {
  int failed;
  int unit, wait, reached, batch;
};

// What one launch reads: the plan, its counters, the forward GEMMs and the loss's operands.
struct EvalArgs {
  NtGemm forward[kMaxLayers];   // layer l: Y_l = act(X_l · W_lᵀ + b_l), B×d_{l+1}
  float* partials[kMaxLayers];  // layer l's K slices' partial Y_l: slices × B×d_{l+1}; or null
  const Unit* units;
  const Wait* waits;
  const int* signals;
  int* counters;  // zero at the launch
  WaitFailure* failure;
  LossPartial* slots;              // one per Loss unit
  MetricCounters* metrics;         // what the Metrics unit adds to
  const float* outputs;            // the last layer's Y: B×outputs
  const int32_t* labels;           // cross-entropy: B labels; else null
  const float* targets;            // mean squared error: B×outputs; else null
  StepKernel::UnitTime* timeline;  // per unit, where set; else null
  long long timeout_ns;
  int unit_count, batch, outputs_width;
};
static_assert(sizeof(EvalArgs) <= 4096, "a kernel's parameters are at most 4 KB");

__device__ __forceinline__ int sm_id() {
  int id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

__device__ __forceinline__ long long now_ns() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

using DeviceInt = ::cuda::atomic_ref<int, ::cuda::thread_scope_device>;

// Thread 0: acquires every counter unit u waits on up to its target. False when this wait ran
// past the time limit (recorded, if it is the launch's first) or another block's did.
__device__ bool await_unit(const EvalArgs& a, const Unit& unit, int u) {
  for (int w = unit.first_wait; w < unit.first_wait + unit.wait_count; ++w) {
    const Wait wait = a.waits[w];
    DeviceInt counter(a.counters[wait.counter]);
    int seen = counter.load(::cuda::memory_order_acquire);
    const long long start = seen < wait.target ? now_ns() : 0;
    while (seen < wait.target) {
      if (DeviceInt(a.failure->failed).load(::cuda::memory_order_relaxed) != 0) return false;
      if (now_ns() - start > a.timeout_ns) {
        if (atomicCAS(&a.failure->failed, 0, 1) == 0) {
          a.failure->unit = u, a.failure->wait = w, a.failure->reached = seen;
          a.failure->batch = a.batch;
        }
        return false;
      }
      __nanosleep(64);
      seen = counter.load(::cuda::memory_order_acquire);
    }
  }
  return true;
}

// Thread 0, after the block's barrier that follows the unit: the block's writes, then each of the
// unit's counters + 1 (the fence makes them visible to whoever acquires the count).
__device__ void signal_unit(const EvalArgs& a, const Unit& unit) {
  __threadfence();
  for (int s = unit.first_signal; s < unit.first_signal + unit.signal_count; ++s)
    DeviceInt(a.counters[a.signals[s]]).fetch_add(1, ::cuda::memory_order_relaxed);
}

// A K slice's partial tile of layer `layer`: plain (alpha 1, no epilogue) into its own plane.
__device__ gemm::detail::Epilogue slice_epilogue(const EvalArgs& a, const Unit& unit) {
  const gemm::detail::Epilogue& c = a.forward[unit.layer].c;
  float* plane = a.partials[unit.layer] + static_cast<int64_t>(unit.slice) * c.m * c.n;
  const bool vec4 = reinterpret_cast<uintptr_t>(plane) % 16 == 0 && c.n % 4 == 0;
  return {plane, c.n, c.m, c.n, 1.0f, 0.0f, vec4, gemm::EpilogueOp::None};
}

// Every thread: a split tile's slices added in slice order (the same bits every run), through the
// layer's epilogue.
template <int kThreads>
__device__ void run_sum(const EvalArgs& a, const Unit& unit) {
  const gemm::detail::Epilogue& c = a.forward[unit.layer].c;
  const float* partials = a.partials[unit.layer];
  const int64_t plane = static_cast<int64_t>(c.m) * c.n;
  // Four columns a thread where every plane's rows are 16-byte aligned and the tile's columns
  // come in fours; else one.
  const bool vec4 = reinterpret_cast<uintptr_t>(partials) % 16 == 0 && c.n % 4 == 0 &&
                    unit.col0 % 4 == 0 && unit.cols % 4 == 0;
  const int width = vec4 ? unit.cols / 4 : unit.cols;
  for (int e = threadIdx.x; e < unit.rows * width; e += kThreads) {
    const int i = unit.row0 + e / width;
    if (vec4) {
      const int j = unit.col0 + e % width * 4;
      const float4* p =
          reinterpret_cast<const float4*>(partials + static_cast<int64_t>(i) * c.n + j);
      float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      for (int s = 0; s < unit.slices; ++s) {
        const float4 part = __ldcg(p + s * plane / 4);
        v.x += part.x, v.y += part.y, v.z += part.z, v.w += part.w;
      }
      c.store4(i, j, v);
    } else {
      const int j = unit.col0 + e % width;
      const float* p = partials + static_cast<int64_t>(i) * c.n + j;
      float v = 0.0f;
      for (int s = 0; s < unit.slices; ++s) v += __ldcg(p + s * plane);
      c.store(i, j, v);
    }
  }
  gemm::step_tile::fence_proxy_async_global();  // before another block's TMA reads them
}

// Every thread: the loss of rows [row0, row0 + rows), a warp a row at a time (loss_rows.cuh), its
// metrics summed in warp order into the unit's slot.
template <int kThreads>
__device__ void run_loss(const EvalArgs& a, const Unit& unit) {
  constexpr int kWarps = kThreads / cuda::kWarp;
  __shared__ LossPartial warps[kWarps];
  const int lane = threadIdx.x % cuda::kWarp, warp = threadIdx.x / cuda::kWarp;
  double loss = 0.0;  // kept by lane 0
  unsigned int correct = 0, bad = 0;
  const bool cached = a.outputs_width <= cuda::kWarp * cuda::kLossCache;
  for (int r = unit.row0 + warp; r < unit.row0 + unit.rows; r += kWarps) {
    if (a.labels == nullptr)
      cuda::squared_error_row(a.outputs, a.targets, nullptr, r, a.outputs_width, 0.0f, lane, loss,
                              bad);
    else if (cached)
      cuda::softmax_xent_row<true>(a.outputs, a.labels[r], nullptr, r, a.outputs_width, 0.0f, lane,
                                   loss, correct, bad);
    else
      cuda::softmax_xent_row<false>(a.outputs, a.labels[r], nullptr, r, a.outputs_width, 0.0f, lane,
                                    loss, correct, bad);
  }
  if (a.labels == nullptr)  // the squared error counts bad targets in every lane
    for (int offset = cuda::kWarp / 2; offset > 0; offset /= 2)
      bad += __shfl_xor_sync(0xffffffffu, bad, offset);
  if (lane == 0) warps[warp] = {loss, correct, bad};
  __syncthreads();
  if (threadIdx.x == 0) a.slots[unit.row0 / kLossRows] = cuda::add_in_warp_order(warps);
}

// Thread 0: the Loss units' slots added in order, into the metrics.
__device__ void run_metrics(const EvalArgs& a, const Unit& unit) {
  double loss = 0.0;
  unsigned long long correct = 0, bad = 0;
  for (int i = 0; i < unit.rows; ++i) {
    loss += __ldcg(&a.slots[i].loss_sum);
    correct += __ldcg(&a.slots[i].correct);
    bad += __ldcg(&a.slots[i].bad);
  }
  a.metrics->loss_sum += loss;
  a.metrics->correct += correct;
  a.metrics->seen += a.batch;
  if (a.labels != nullptr)
    a.metrics->bad_labels += bad;
  else
    a.metrics->bad_targets += bad;
}

// Units b, b + G, … of the plan on block b of G, all resident. Each unit: thread 0 acquires its
// waits; the block runs it; after a barrier thread 0 releases its signals.
template <Arithmetic A>
__global__ void __launch_bounds__(Tile<A>::kThreads, 1)
    evaluate_kernel(const __grid_constant__ EvalArgs a) {
  constexpr int kThreads = Tile<A>::kThreads;
  extern __shared__ float smem_raw[];
  if (threadIdx.x == 0) gemm::step_tile::init_pipeline<A>(smem_raw);
  __syncthreads();
  int issued = 0;  // K tiles this block's pipeline has run
  for (int u = blockIdx.x; u < a.unit_count; u += gridDim.x) {
    const Unit unit = a.units[u];
    bool go = true;
    if (threadIdx.x == 0) {
      go = await_unit(a, unit, u);
      if (a.timeline != nullptr) a.timeline[u].start_ns = now_ns();
    }
    // Thread 0's answer to every thread through the barrier itself, not shared memory, which
    // racecheck would misjudge here (docs/NOTES.md, "Racecheck and named barriers").
    if (!__syncthreads_and(go)) return;  // a wait gave up: every block leaves at its next wait
    if (unit.kind == Kind::Forward && unit.part == Part::Sum) {
      run_sum<kThreads>(a, unit);
    } else if (unit.kind == Kind::Forward) {
      const NtGemm& g = a.forward[unit.layer];
      issued += gemm::step_tile::run_nt_tile<A>(
          smem_raw, g, unit.part == Part::Slice ? slice_epilogue(a, unit) : g.c, unit.row0,
          unit.col0, unit.k0, unit.k_len, issued);
    } else if (unit.kind == Kind::Loss) {
      run_loss<kThreads>(a, unit);
    } else if (unit.kind == Kind::Metrics && threadIdx.x == 0) {
      run_metrics(a, unit);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      if (a.timeline != nullptr) {
        StepKernel::UnitTime& t = a.timeline[u];
        t.end_ns = now_ns();
        t.sm = sm_id();
        t.block = static_cast<int>(blockIdx.x);
        t.kind = static_cast<int>(unit.kind);
        t.part = static_cast<int>(unit.part);
        t.layer = unit.layer;
      }
      signal_unit(a, unit);
    }
  }
}

}  // namespace

}  // namespace engine
