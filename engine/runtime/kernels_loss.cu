// The engine's loss kernels: softmax cross-entropy and mean squared error, each with its gradient
// and the metrics summed on the device in a fixed order (kernels_common.cuh says what the
// engine's kernels share).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "engine/runtime/backend.h"
#include "engine/runtime/kernels_common.cuh"
#include "engine/runtime/loss_rows.cuh"

namespace engine::cuda {

namespace {

// The loss kernels. A batch of logits is a few KB (256×10 is 10 KB), so the floor is one launch,
// and what costs is a chain of dependent loads. So: blocks of kLossThreads threads, one warp per
// row, as many blocks as the rows need (up to kLossMaxBlocks; past that the grid strides over the
// rows), and every row's loads in flight at once. A warp's lanes stride over the row's columns and
// butterfly shuffles combine them. The metrics meet without float atomics (backend.h's
// LossScratch): each warp's lane 0 sums its rows in row order, thread 0 adds the block's warps in
// warp order into the block's slot, and the last block to finish adds the slots in a fixed order.
// Every order depends on `rows` alone: the sums are reproducible, launch by launch or in a graph.
constexpr int kLossThreads = 256;
constexpr int kLossWarps = kLossThreads / kWarp;  // rows per block and pass
static_assert(kLossThreads % kWarp == 0 && kLossThreads <= 1024, "whole warps in one block");

int loss_blocks(int rows) {
  return static_cast<int>(std::clamp<int64_t>(
      (static_cast<int64_t>(rows) + kLossWarps - 1) / kLossWarps, 1, kLossMaxBlocks));
}

// The loss kernels' end: warp w's lane 0 holds the sums of its rows. The block's warps are added
// in warp order into its slot; the block that takes the last ticket adds the slots (thread t takes
// slots t, t + kLossThreads, … in order, then butterflies and warp order combine the threads) into
// *counters, with `rows` into seen and the bad count into *bad_total, adds 1 to *step_count
// unless it is null, and sets the ticket to 0.
__device__ void finish_loss(double loss, unsigned int correct, unsigned int bad, int rows,
                            MetricCounters* counters, unsigned long long* bad_total,
                            LossScratch* scratch, int64_t* step_count) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  __shared__ LossPartial warps[kLossWarps];
  __shared__ bool last;
  if (lane == 0) warps[warp] = {loss, correct, bad};
  __syncthreads();
  if (threadIdx.x == 0) {
    scratch->partials[blockIdx.x] = add_in_warp_order(warps);
    __threadfence();  // the slot reaches every block before the ticket does
    last = atomicAdd(&scratch->ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  double l = 0.0;
  unsigned long long c = 0, b = 0;
  for (int i = threadIdx.x; i < static_cast<int>(gridDim.x); i += kLossThreads) {
    // From L2 (__ldcg): other SMs wrote the slots.
    l += __ldcg(&scratch->partials[i].loss_sum);
    c += __ldcg(&scratch->partials[i].correct);
    b += __ldcg(&scratch->partials[i].bad);
  }
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    l += __shfl_xor_sync(0xffffffffu, l, offset);
    c += __shfl_xor_sync(0xffffffffu, c, offset);
    b += __shfl_xor_sync(0xffffffffu, b, offset);
  }
  __shared__ double warp_l[kLossWarps];
  __shared__ unsigned long long warp_c[kLossWarps], warp_b[kLossWarps];
  if (lane == 0) warp_l[warp] = l, warp_c[warp] = c, warp_b[warp] = b;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kLossWarps; ++w) l += warp_l[w], c += warp_c[w], b += warp_b[w];
    counters->loss_sum += l;
    counters->correct += c;
    counters->seen += rows;
    *bad_total += b;
    if (step_count != nullptr) *step_count += 1;
    scratch->ticket = 0;  // every block has taken its ticket: the next launch starts clean
  }
}

// logits, dlogits are rows×classes; labels are rows; grid loss_blocks(rows) × kLossThreads. Each
// warp takes rows as softmax_xent_row (loss_rows.cuh) computes them; kCached as there.
template <bool kCached>
__global__ void __launch_bounds__(kLossThreads)
    softmax_xent_kernel(const float* __restrict__ logits, const int32_t* __restrict__ labels,
                        float* __restrict__ dlogits, int rows, int classes, float inv_batch,
                        MetricCounters* counters, LossScratch* scratch, int64_t* step_count) {
  await_prior_kernels();
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  double warp_loss = 0.0;  // kept by lane 0
  unsigned int warp_correct = 0, warp_bad = 0;
  for (int64_t r = blockIdx.x * kLossWarps + warp; r < rows; r += gridDim.x * kLossWarps) {
    softmax_xent_row<kCached>(logits, labels[r], dlogits, r, classes, inv_batch, lane, warp_loss,
                              warp_correct, warp_bad);
  }
  finish_loss(warp_loss, warp_correct, warp_bad, rows, counters, &counters->bad_labels, scratch,
              step_count);
}

// predictions, targets, dpredictions are rows×cols; grid loss_blocks(rows) × kLossThreads. Laid
// out as softmax_xent_kernel, each row squared_error_row's (loss_rows.cuh).
__global__ void __launch_bounds__(kLossThreads)
    squared_error_kernel(const float* __restrict__ predictions, const float* __restrict__ targets,
                         float* __restrict__ dpredictions, int rows, int cols, float grad_scale,
                         MetricCounters* counters, LossScratch* scratch, int64_t* step_count) {
  await_prior_kernels();
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  double warp_loss = 0.0;  // kept by lane 0
  unsigned int lane_bad = 0;
  for (int64_t r = blockIdx.x * kLossWarps + warp; r < rows; r += gridDim.x * kLossWarps) {
    squared_error_row(predictions, targets, dpredictions, r, cols, grad_scale, lane, warp_loss,
                      lane_bad);
  }
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    lane_bad += __shfl_xor_sync(0xffffffffu, lane_bad, offset);
  finish_loss(warp_loss, 0u, lane_bad, rows, counters, &counters->bad_targets, scratch, step_count);
}

}  // namespace

void softmax_xent(const float* logits, const int32_t* labels, float* dlogits, int rows, int classes,
                  float inv_batch, MetricCounters* counters, LossScratch* scratch,
                  int64_t* step_count, cudaStream_t stream) {
  const int blocks = loss_blocks(rows);
  const auto kernel =
      classes <= kWarp * kLossCache ? softmax_xent_kernel<true> : softmax_xent_kernel<false>;
  launch_kernel(kernel, {dim3(blocks), dim3(kLossThreads), 0, stream}, logits, labels, dlogits,
                rows, classes, inv_batch, counters, scratch, step_count);
}

void squared_error(const float* predictions, const float* targets, float* dpredictions, int rows,
                   int cols, float grad_scale, MetricCounters* counters, LossScratch* scratch,
                   int64_t* step_count, cudaStream_t stream) {
  launch_kernel(squared_error_kernel, {dim3(loss_blocks(rows)), dim3(kLossThreads), 0, stream},
                predictions, targets, dpredictions, rows, cols, grad_scale, counters, scratch,
                step_count);
}

}  // namespace engine::cuda
