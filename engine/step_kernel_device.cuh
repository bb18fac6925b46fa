// The step kernel's device side (step_kernel.h): what one launch reads, the waits on the
// counters and the signals, each kind of unit's work, and the persistent kernel that runs a plan's
// units. Included by engine/step_kernel.cu alone, whose host side launches it; sm_90a only.
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cuda/atomic>

#include "base/batch_source.h"
#include "base/gather_rows.cuh"
#include "engine/backend.h"
#include "engine/loss_rows.cuh"
#include "engine/optim.h"
#include "engine/optim_update.cuh"
#include "engine/step_kernel.h"
#include "engine/step_plan.h"
#include "kernels/fast/step_tile.cuh"

namespace engine {

namespace {  // one translation unit: step_kernel.cu

using gemm::step_tile::Arithmetic;
using gemm::step_tile::Layout;
using gemm::step_tile::NtGemm;
using gemm::step_tile::Tile;
using gemm::step_tile::TileGemm;
using step_plan::Group;
using step_plan::Kind;
using step_plan::Part;
using step_plan::Unit;
using step_plan::Wait;

namespace cg = cooperative_groups;

constexpr int kMaxLayers = StepKernel::kMaxLayers;
constexpr int kMaxClusterBlocks = StepKernel::kMaxClusterBlocks;

// Where a launch gave up: the first wait past its time limit (failed = 1), in a plan of `steps`
// steps of `batch` rows. Sticky until check() reads it.
struct WaitFailure {
  int failed;
  int unit, wait, reached, batch, steps;
  int training;  // in a training step's plan, else an evaluation's
};

// A layer's parameters as the Update units change them: W_l (d_{l+1}×d_l) and b_l with their
// gradients, and their slices of the optimiser's state (UpdateRule: SGD's velocity in state0,
// or null; Adam's m and v).
struct LayerParams {
  float *w, *b;
  float *grad_w, *grad_b;
  float *w_state0, *w_state1, *b_state0, *b_state1;
};

// What one launch reads: the plan, its counters, the forward GEMMs and the loss's operands; and
// for a training step (Scope::Step) the backward GEMMs, the gradients, the parameters with the
// optimiser's rule and state, and the step counter.
struct LaunchArgs {
  NtGemm forward[kMaxLayers];   // layer l: Y_l = act(X_l · W_lᵀ + b_l), B×d_{l+1}
  float* partials[kMaxLayers];  // layer l's K slices' partial Y_l: slices × B×d_{l+1}; or null
  const Unit* units;
  const Group* groups;       // the units as clusters take them, by cluster (step_plan::Schedule)
  const int* cluster_first;  // cluster c runs groups[cluster_first[c] .. cluster_first[c + 1])
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
  int batch, outputs_width;
  int loss_rows;               // rows per Loss unit: slot i holds rows i·loss_rows, …
  int widths[kMaxLayers + 1];  // d0 … dL

  bool training;
  TileGemm<Layout::NN> input_grad[kMaxLayers];  // l ≥ 1: G_{l−1} = (G_l · W_l) ⊙ [Y_{l−1} > 0]
  TileGemm<Layout::TN> weight_grad[kMaxLayers];  // dW_l = G_lᵀ · X_l, d_{l+1}×d_l
  float* grads[kMaxLayers];  // G_l, B×d_{l+1}: the loss's gradient for l = L−1
  LayerParams params[kMaxLayers];
  UpdateRule rule;
  int64_t* step_count;  // the Metrics unit adds 1; the updates read it
  float loss_scale;     // the loss gradient's scale: 1/B, or 2/(B·outputs) for the squared error
  int steps;            // the plan's
  // The next batches' gather: the Gather units of the launch's first gather_steps steps (0: none)
  // copy the batch the step count names from `source` into X_0 and the labels.
  gemm_mlp::BatchSource source;
  float* batch_x;
  int32_t* batch_labels;
  int gather_steps;
};
// CUDA 12.1 and newer take up to 32,764 bytes of kernel parameters (compute capability 7.0+).
static_assert(sizeof(LaunchArgs) <= 32764, "a kernel's parameters are at most 32,764 bytes");
static_assert(offsetof(StepKernel::UnitTime, all_staged_ns) ==
                      offsetof(StepKernel::UnitTime, k_done_ns) + sizeof(long long) &&
                  offsetof(StepKernel::UnitTime, stored_ns) ==
                      offsetof(StepKernel::UnitTime, k_done_ns) + 2 * sizeof(long long),
              "a tile's three stamps are one array (run_tile's stamps)");

__device__ __forceinline__ int sm_id() {
  int id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

__device__ __forceinline__ long long now_ns() { return gemm::step_tile::global_ns(); }

// This block's place in its cluster: the grid is (clusters, 1, size) in clusters of (1, 1, size)
// blocks. A unit runs on the whole cluster, or on one block alone as Rank{0, 1}.
struct Rank {
  int rank, size;
};
__device__ __forceinline__ Rank cluster_rank() {
  return {static_cast<int>(blockIdx.z), static_cast<int>(gridDim.z)};
}

// Block r.rank of r.size's share of `count` items from `first`: a run of them, in rank order.
struct Share {
  int first, count;
};
__device__ __forceinline__ Share share(int first, int count, Rank r) {
  const int per_rank = (count + r.size - 1) / r.size;
  const int begin = min(r.rank * per_rank, count), end = min(begin + per_rank, count);
  return {first + begin, end - begin};
}

// Every thread: the barrier that ends a unit, of the whole cluster where it has several blocks
// (its release and acquire order every block's writes before rank 0's signal).
__device__ __forceinline__ void unit_barrier(Rank r) {
  if (r.size > 1)
    cg::this_cluster().sync();
  else
    __syncthreads();
}

// Every thread of every block of a cluster of several, with its block's answer: whether every
// block's is yes, through rank 0's `votes` (the same shared variable in every block). The caller
// ends the unit with a cluster barrier before the next vote writes them again.
__device__ bool cluster_all(int* votes, bool yes, Rank r) {
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) cluster.map_shared_rank(votes, 0)[r.rank] = yes ? 1 : 0;
  cluster.sync();
  const int* all = cluster.map_shared_rank(votes, 0);
  bool every = true;
  for (int z = 0; z < r.size; ++z) every = every && all[z] != 0;
  return every;
}

using DeviceInt = ::cuda::atomic_ref<int, ::cuda::thread_scope_device>;

// Thread 0: acquires every counter unit u waits on up to its target. False when this wait ran
// past the time limit (recorded, if it is the launch's first) or another block's did.
__device__ bool await_unit(const LaunchArgs& a, const Unit& unit, int u) {
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
          a.failure->batch = a.batch, a.failure->steps = a.steps;
          a.failure->training = a.training ? 1 : 0;
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
__device__ void signal_unit(const LaunchArgs& a, const Unit& unit) {
  __threadfence();
  for (int s = unit.first_signal; s < unit.first_signal + unit.signal_count; ++s)
    DeviceInt(a.counters[a.signals[s]]).fetch_add(1, ::cuda::memory_order_relaxed);
}

// A K slice's partial tile of layer `layer`: plain (alpha 1, no epilogue) into its own plane.
__device__ gemm::detail::Epilogue slice_epilogue(const LaunchArgs& a, const Unit& unit) {
  const gemm::detail::Epilogue& c = a.forward[unit.layer].c;
  float* plane = a.partials[unit.layer] + static_cast<int64_t>(unit.slice) * c.m * c.n;
  const bool vec4 = reinterpret_cast<uintptr_t>(plane) % 16 == 0 && c.n % 4 == 0;
  return {plane, c.n, c.m, c.n, 1.0f, 0.0f, vec4, gemm::EpilogueOp::None};
}

// Every thread: a split tile's slices added in slice order (the same bits every run), through the
// layer's epilogue; in a cluster, each block its share of the rows.
template <int kThreads>
__device__ void run_sum(const LaunchArgs& a, const Unit& unit, Rank r) {
  const gemm::detail::Epilogue& c = a.forward[unit.layer].c;
  const float* partials = a.partials[unit.layer];
  const int64_t plane = static_cast<int64_t>(c.m) * c.n;
  // Four columns a thread where every plane's rows are 16-byte aligned and the tile's columns
  // come in fours; else one.
  const bool vec4 = reinterpret_cast<uintptr_t>(partials) % 16 == 0 && c.n % 4 == 0 &&
                    unit.col0 % 4 == 0 && unit.cols % 4 == 0;
  const int width = vec4 ? unit.cols / 4 : unit.cols;
  const Share rows = share(unit.row0, unit.rows, r);
  for (int e = threadIdx.x; e < rows.count * width; e += kThreads) {
    const int i = rows.first + e / width;
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

// Every thread: the loss of rows [row0, row0 + rows), a warp a row at a time (loss_rows.cuh), in
// a cluster each block its share of them; their metrics summed in warp order, then in rank order,
// into the unit's slot.
template <int kThreads>
__device__ void run_loss(const LaunchArgs& a, const Unit& unit, Rank r) {
  constexpr int kWarps = kThreads / cuda::kWarp;
  __shared__ LossPartial warps[kWarps];
  __shared__ LossPartial blocks[kMaxClusterBlocks];  // rank 0's: each block's sum
  const int lane = threadIdx.x % cuda::kWarp, warp = threadIdx.x / cuda::kWarp;
  double loss = 0.0;  // kept by lane 0
  unsigned int correct = 0, bad = 0;
  const bool cached = a.outputs_width <= cuda::kWarp * cuda::kLossCache;
  const Share rows = share(unit.row0, unit.rows, r);
  float* gradient = a.training ? a.grads[unit.layer] : nullptr;  // with the loss's gradient
  const float scale = a.training ? a.loss_scale : 0.0f;
  for (int i = rows.first + warp; i < rows.first + rows.count; i += kWarps) {
    if (a.labels == nullptr)
      cuda::squared_error_row(a.outputs, a.targets, gradient, i, a.outputs_width, scale, lane, loss,
                              bad);
    else if (cached)
      cuda::softmax_xent_row<true>(a.outputs, __ldcg(a.labels + i), gradient, i, a.outputs_width,
                                   scale, lane, loss, correct, bad);
    else
      cuda::softmax_xent_row<false>(a.outputs, __ldcg(a.labels + i), gradient, i, a.outputs_width,
                                    scale, lane, loss, correct, bad);
  }
  if (a.labels == nullptr)  // the squared error counts bad targets in every lane
    for (int offset = cuda::kWarp / 2; offset > 0; offset /= 2)
      bad += __shfl_xor_sync(0xffffffffu, bad, offset);
  if (lane == 0) warps[warp] = {loss, correct, bad};
  // The gradient's rows, stored, before the release that lets the backward tiles' TMA read them.
  if (gradient != nullptr) gemm::step_tile::fence_proxy_async_global();
  __syncthreads();
  LossPartial* slot = &a.slots[unit.row0 / a.loss_rows];
  if (r.size == 1) {
    if (threadIdx.x == 0) *slot = cuda::add_in_warp_order(warps);
    return;
  }
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) cluster.map_shared_rank(blocks, 0)[r.rank] = cuda::add_in_warp_order(warps);
  cluster.sync();
  if (r.rank == 0 && threadIdx.x == 0) *slot = cuda::add_in_order(blocks, r.size);
}

// Every thread: the Loss units' slots added in order (staged through shared memory, a load a
// thread, in chunks), into the metrics.
template <int kThreads>
__device__ void run_metrics(const LaunchArgs& a, const Unit& unit) {
  constexpr int kChunk = 64;
  static_assert(kChunk <= kThreads, "a chunk is a slot a thread");
  __shared__ LossPartial chunk[kChunk];
  double loss = 0.0;  // thread 0's
  unsigned long long correct = 0, bad = 0;
  for (int first = 0; first < unit.rows; first += kChunk) {
    const int count = min(kChunk, unit.rows - first);
    if (threadIdx.x < count) {
      const LossPartial* slot = &a.slots[first + threadIdx.x];
      chunk[threadIdx.x] = {__ldcg(&slot->loss_sum), __ldcg(&slot->correct), __ldcg(&slot->bad)};
    }
    __syncthreads();
    if (threadIdx.x == 0)
      for (int i = 0; i < count; ++i) {
        loss += chunk[i].loss_sum;
        correct += chunk[i].correct;
        bad += chunk[i].bad;
      }
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  a.metrics->loss_sum += loss;
  a.metrics->correct += correct;
  a.metrics->seen += a.batch;
  if (a.labels != nullptr)
    a.metrics->bad_labels += bad;
  else
    a.metrics->bad_targets += bad;
  if (a.training) *a.step_count += 1;  // the step counted, before the updates read it
}

// Every thread: entries [row0, row0 + rows) of db_l, the column sums of G_l (B×d_{l+1}), in a
// cluster each block its share: 32 columns at a time, each warp of the first kSummers threads
// summing rows warp, warp + kWarps, … of them, then the warps' sums added in warp order (the
// same bits every run); the other threads pass the barriers. The summing warps are the step
// tile's consumers: warps that exchange sums through shared memory must have passed the same
// named barriers before for racecheck to judge the exchange (docs/NOTES.md, "Racecheck and named
// barriers": after a block's GEMM tiles, the producer's writes here were reported).
template <int kSummers>
__device__ void run_bias_grad(const LaunchArgs& a, const Unit& unit, Rank r) {
  static_assert(kSummers % cuda::kWarp == 0, "whole warps sum");
  constexpr int kWarps = kSummers / cuda::kWarp;
  __shared__ float sums[kWarps][cuda::kWarp];
  const int lane = threadIdx.x % cuda::kWarp, warp = threadIdx.x / cuda::kWarp;
  const bool summer = warp < kWarps;
  const float* g = a.grads[unit.layer];
  const int width = a.widths[unit.layer + 1];
  const Share cols = share(unit.row0, unit.rows, r);
  for (int c0 = cols.first; c0 < cols.first + cols.count; c0 += cuda::kWarp) {
    const int c = c0 + lane;
    const bool mine = c < cols.first + cols.count;
    float sum = 0.0f;
    for (int i = warp; summer && mine && i < a.batch; i += kWarps)
      sum += __ldcg(g + static_cast<int64_t>(i) * width + c);
    if (summer) sums[warp][lane] = sum;
    __syncthreads();
    if (warp == 0 && mine) {
      float total = 0.0f;
      for (int w = 0; w < kWarps; ++w) total += sums[w][lane];
      a.params[unit.layer].grad_b[c] = total;
    }
    __syncthreads();
  }
}

// Parameters [begin, end) of an array w, with its gradient g and state s0, s1 (either may be
// null), by the optimiser's rule `update` (update(w, g, s0, s1): one parameter's values, in
// registers): every thread of a block. Where the four arrays are 16-byte aligned, the whole float4s
// go four lanes at a time, each array's float4 loaded before any is stored (w might alias g, so
// a load per element would wait for the store before it); the ends go a float at a time. One
// float4 of each in flight: two spill at the kernel's register cap.
template <int kThreads, class Update>
__device__ __forceinline__ void update_range(float* w, const float* g, float* s0, float* s1,
                                             int64_t begin, int64_t end, const Update& update) {
  const auto one = [&](int64_t e) {
    float value = w[e], first = s0 != nullptr ? s0[e] : 0.0f, second = s1 != nullptr ? s1[e] : 0.0f;
    update(value, __ldcg(g + e), first, second);
    w[e] = value;
    if (s0 != nullptr) s0[e] = first;
    if (s1 != nullptr) s1[e] = second;
  };
  const auto bits = [](const void* p) { return reinterpret_cast<uintptr_t>(p); };
  const bool aligned = (bits(w) | bits(g) | bits(s0) | bits(s1)) % 16 == 0;
  const int64_t body_begin = aligned ? min((begin + 3) / 4 * 4, end) : end;
  const int64_t body_end = max(body_begin, end / 4 * 4);
  for (int64_t e = begin + threadIdx.x; e < body_begin; e += kThreads) one(e);
  for (int64_t e = body_end + threadIdx.x; e < end; e += kThreads) one(e);
  float4* w4 = reinterpret_cast<float4*>(w);
  float4* s04 = reinterpret_cast<float4*>(s0);
  float4* s14 = reinterpret_cast<float4*>(s1);
  for (int64_t q = body_begin / 4 + threadIdx.x; q < body_end / 4; q += kThreads) {
    float4 wv = w4[q];
    const float4 gv = __ldcg(reinterpret_cast<const float4*>(g) + q);
    float4 v0 = s0 != nullptr ? s04[q] : float4{}, v1 = s1 != nullptr ? s14[q] : float4{};
    update(wv.x, gv.x, v0.x, v1.x);
    update(wv.y, gv.y, v0.y, v1.y);
    update(wv.z, gv.z, v0.z, v1.z);
    update(wv.w, gv.w, v0.w, v1.w);
    w4[q] = wv;
    if (s0 != nullptr) s04[q] = v0;
    if (s1 != nullptr) s14[q] = v1;
  }
}

// Every thread: rows [row0, row0 + rows) of W_l and of b_l updated by the optimiser's rule, in a
// cluster each block its share. The step's count is the Metrics unit's, which the unit acquired.
template <int kThreads>
__device__ void run_update(const LaunchArgs& a, const Unit& unit, Rank r) {
  const LayerParams& p = a.params[unit.layer];
  const UpdateRule& rule = a.rule;
  const int in = a.widths[unit.layer];
  const Share rows = share(unit.row0, unit.rows, r);
  const int64_t counted = __ldcg(a.step_count);
  const bool sgd = rule.kind == UpdateRule::Kind::Sgd;
  const float sgd_lr = sgd ? lr_at(rule.schedule, counted - 1) : 0.0f;
  const cuda::AdamStep adam =
      sgd ? cuda::AdamStep{} : cuda::adam_step_at(rule.schedule, counted, rule.beta1, rule.beta2);
  const auto run = [&](float* w, const float* g, float* s0, float* s1, int64_t begin, int64_t end) {
    if (sgd) {  // s0: the velocity, where momentum keeps one
      const bool velocity = s0 != nullptr;
      update_range<kThreads>(w, g, s0, nullptr, begin, end,
                             [&](float& value, float grad, float& first, float&) {
                               cuda::sgd_update(value, grad, first, velocity, sgd_lr, rule.momentum,
                                                rule.weight_decay);
                             });
    } else {
      update_range<kThreads>(w, g, s0, s1, begin, end,
                             [&](float& value, float grad, float& first, float& second) {
                               cuda::adam_update(value, grad, first, second, adam, rule.beta1,
                                                 rule.beta2, rule.eps, rule.weight_decay);
                             });
    }
  };
  run(p.w, p.grad_w, p.w_state0, p.w_state1, static_cast<int64_t>(rows.first) * in,
      static_cast<int64_t>(rows.first + rows.count) * in);
  run(p.b, p.grad_b, p.b_state0, p.b_state1, rows.first, rows.first + rows.count);
  gemm::step_tile::fence_proxy_async_global();  // before a later step's TMA reads the weights
}

// Every thread, in a step whose gather the launch runs: rows [row0, row0 + rows) of the batch that
// the step count names (the next step's: this one is counted) from the source into X_0 and the
// labels, in a cluster each block its share (base/gather_rows.cuh).
template <int kThreads>
__device__ void run_gather(const LaunchArgs& a, const Unit& unit, Rank r) {
  static_assert(kThreads % cuda::kWarp == 0, "gather_rows takes whole warps, a row each");
  if (unit.step >= a.gather_steps) return;
  const Share rows = share(unit.row0, unit.rows, r);
  gemm_mlp::gather_rows(a.source, __ldcg(a.step_count), rows.first, rows.count, a.batch_x,
                        a.batch_labels, threadIdx.x, kThreads);
  gemm::step_tile::fence_proxy_async_global();  // before the next step's TMA reads the rows
}

// Every thread: a GEMM unit's tile of layout L (a Whole unit or a K slice; backward GEMMs are
// unsplit), its K shared across the cluster; `issued` is the block's count for layout L.
template <Arithmetic A, Layout L>
__device__ void run_gemm_unit(float* smem_raw, const TileGemm<L>& g,
                              const gemm::detail::Epilogue& c, const Unit& unit, Rank r,
                              int& issued, long long* stamps) {
  const gemm::step_tile::KShare k =
      gemm::step_tile::k_share<A>(unit.k0, unit.k_len, r.rank, r.size);
  issued += gemm::step_tile::run_tile<A, L>(smem_raw, g, c, unit.row0, unit.col0, k.k0, k.k_len,
                                            issued, r.size > 1, stamps);
}

// Cluster c's groups of the plan's units (an evaluation's or a training step's; group_units and
// schedule_groups), in list order, on a grid that is all resident. A group of one unit runs on
// every block of the cluster, each its share (a GEMM tile's K, a Sum's or a Loss unit's rows); a
// per-block group's units run one a block, alone. Each group: thread 0 of every block acquires its
// unit's waits; the blocks agree whether to go on; they run their units; after the cluster's
// barrier, thread 0 of the unit's first block releases its signals.
template <Arithmetic A>
__global__ void __launch_bounds__(Tile<A>::kThreads, 1)
    plan_kernel(const __grid_constant__ LaunchArgs a) {
  constexpr int kThreads = Tile<A>::kThreads;
  extern __shared__ float smem_raw[];
  __shared__ int votes[kMaxClusterBlocks];  // rank 0's: each block's answer to its waits
  const Rank r = cluster_rank();
  if (threadIdx.x == 0) gemm::step_tile::init_pipelines<A>(smem_raw);
  if (threadIdx.x == Tile<A>::kConsumerThreads)  // the producer's first thread: every map now
    for (int l = 0; l < kMaxLayers; ++l) {       // (a layer the launch lacks has none)
      gemm::step_tile::prefetch_maps(a.forward[l]);
      if (a.training) {
        gemm::step_tile::prefetch_maps(a.input_grad[l]);
        gemm::step_tile::prefetch_maps(a.weight_grad[l]);
      }
    }
  // The barriers set up; in a cluster, every block started before any reaches into another's.
  unit_barrier(r);
  int issued_nt = 0, issued_nn = 0, issued_tn = 0;  // K tiles each layout's pipeline has run
  for (int gi = a.cluster_first[blockIdx.x]; gi < a.cluster_first[blockIdx.x + 1]; ++gi) {
    const Group group = a.groups[gi];
    // This block's unit and the blocks that run it with it: the cluster, or the block alone.
    const int u = group.first + (group.per_block ? r.rank : 0);
    const bool mine = !group.per_block || r.rank < group.count;  // a block may have none
    const Rank ur = group.per_block ? Rank{0, 1} : r;
    const Unit unit = mine ? a.units[u] : Unit{};
    bool go = true;
    StepKernel::UnitTime* time =
        a.timeline != nullptr && mine && ur.rank == 0 ? &a.timeline[u] : nullptr;
    long long* stamps = time != nullptr ? &time->k_done_ns : nullptr;
    if (threadIdx.x == 0 && mine) {
      if (time != nullptr)
        time->wait_ns = now_ns(), time->k_done_ns = time->all_staged_ns = time->stored_ns = 0;
      go = await_unit(a, unit, u);
      if (time != nullptr) time->start_ns = now_ns();
    }
    // Thread 0's answer to every thread through the barrier itself, not shared memory, which
    // racecheck would misjudge here (docs/NOTES.md, "Racecheck and named barriers").
    go = __syncthreads_and(go);
    if (r.size > 1) go = cluster_all(votes, go, r);
    if (!go) {  // a wait gave up: every block leaves at its next wait
      if (r.size > 1) cg::this_cluster().sync();  // rank 0's votes read before it leaves
      return;
    }
    if (!mine) {
      // Nothing: a per-block group with fewer units than the cluster has blocks.
    } else if (unit.kind == Kind::Forward && unit.part == Part::Sum) {
      run_sum<kThreads>(a, unit, ur);
    } else if (unit.kind == Kind::Forward) {
      const NtGemm& g = a.forward[unit.layer];
      run_gemm_unit<A>(smem_raw, g, unit.part == Part::Slice ? slice_epilogue(a, unit) : g.c, unit,
                       ur, issued_nt, stamps);
    } else if (unit.kind == Kind::InputGrad) {
      const TileGemm<Layout::NN>& g = a.input_grad[unit.layer];
      run_gemm_unit<A>(smem_raw, g, g.c, unit, ur, issued_nn, stamps);
    } else if (unit.kind == Kind::WeightGrad) {
      const TileGemm<Layout::TN>& g = a.weight_grad[unit.layer];
      run_gemm_unit<A>(smem_raw, g, g.c, unit, ur, issued_tn, stamps);
    } else if (unit.kind == Kind::Loss) {
      run_loss<kThreads>(a, unit, ur);
    } else if (unit.kind == Kind::Metrics && ur.rank == 0) {
      run_metrics<kThreads>(a, unit);
    } else if (unit.kind == Kind::BiasGrad) {
      run_bias_grad<Tile<A>::kConsumerThreads>(a, unit, ur);
    } else if (unit.kind == Kind::Update) {
      run_update<kThreads>(a, unit, ur);
    } else if (unit.kind == Kind::Gather) {
      run_gather<kThreads>(a, unit, ur);
    }
    unit_barrier(r);
    if (threadIdx.x == 0 && mine && ur.rank == 0) {
      if (time != nullptr) {
        StepKernel::UnitTime& t = *time;
        t.end_ns = now_ns();
        t.sm = sm_id();
        t.block = static_cast<int>(blockIdx.x);
        t.blocks = ur.size;
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
