// The step as one kernel (docs/NOTES.md, "The step as one kernel"): one persistent launch runs the
// units of a step_plan::Plan on a grid that is all resident (a cooperative launch, refused where
// it would not be), each cluster running its groups of units in the plan's order, which is a
// schedule (step_plan::group_units: a unit, or a tile for each of its blocks; which cluster runs
// each: step_plan::schedule_groups). A unit's dependencies are counters in global memory: it
// acquires each up to its target, and releases its own when done. A wait is bounded: past the
// time limit the launch records the unit, its wait and the count reached, every block leaves, and
// check() throws step_plan::describe's message.
//
// The evaluation (Scope::Evaluate): the forward GEMMs with their bias and ReLU epilogues as tiles
// of tf32_fast's or tf32x3_fast's pipeline (kernels/fast/step_tile.cuh), the loss of each block
// of rows, and the metrics added in block order (the same bits every run, whatever the grid); and
// the training step (train()). A unit runs on a cluster of blocks (set_cluster_size): a GEMM
// tile's K shared among them and their partials added in distributed shared memory, a Loss
// unit's rows shared; or, for GEMMs of more tiles than clusters where that is sooner, on one
// block of it (set_tile_per_block).
//
//   if (std::string why = StepKernel::unavailable_reason(ctx, net); why.empty()) {
//     StepKernel kernel(ctx, net, max_batch, true);     // cross-entropy; allocates once
//     kernel.evaluate(ctx, x, labels.data(), metrics);  // one launch a batch, queued
//     kernel.check(ctx);                                // the one wait
//   }
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/batch_source.h"
#include "engine/context.h"
#include "engine/loss.h"
#include "engine/module.h"
#include "engine/optim.h"
#include "engine/tensor.h"

namespace engine {

class StepKernel {
 public:
  // The most Linear layers the kernel takes (their operands travel in its parameters).
  static constexpr int kMaxLayers = 8;
  // The most blocks in a cluster (the portable cluster size).
  static constexpr int kMaxClusterBlocks = 8;

  // "" when the step kernel can run net with ctx's variant; else why not: a context not on a GPU,
  // a variant other than tf32_fast, tf32x3_fast and auto (whose tiles it runs: tf32_fast's for
  // TF32, tf32x3_fast's for the fp32 variants), a GPU without wgmma, a build without GPU kernels,
  // a network other than a Sequential of Linear and ReLU modules (a ReLU only after a Linear), or
  // more than kMaxLayers Linear layers.
  static std::string unavailable_reason(const Context& ctx, Module& net);

  // Throws gemm_mlp::Error with unavailable_reason() where that is not "". Allocates the outputs
  // of every layer for batches of up to max_batch rows, the counters and the plan of a full batch.
  // cross_entropy: the loss is softmax cross-entropy on labels, else the mean squared error on
  // float targets. net must outlive the kernel; its parameters are read at every launch.
  StepKernel(Context& ctx, Module& net, int max_batch, bool cross_entropy);
  ~StepKernel();
  StepKernel(const StepKernel&) = delete;
  StepKernel& operator=(const StepKernel&) = delete;

  // The network's loss on x (B×inputs, 1 ≤ B ≤ max_batch, in the context's memory) against
  // `targets` (B int32 labels, or B×outputs floats), added to metrics as the loss kernels add it:
  // one launch, queued on the context's stream. The first batch of each size below max_batch
  // builds and uploads its plan (which waits for the device once).
  void evaluate(Context& ctx, const Tensor& x, const void* targets, Metrics& metrics);

  // Where a training launch's Gather units gather the next batch from (train()): the batch that
  // the step count names once the step is counted (the optimizer's device counter, so batch s of
  // the epoch for step s), from `source` into train()'s x and labels, which must be the buffer that
  // the source's batches fill (source.full_batch() rows; data::BatchLoader::buffer()).
  // after_last: whether the launch's last step gathers the batch after it too (not where the next
  // step is in a new epoch, whose order is not uploaded yet).
  struct NextBatch {
    gemm_mlp::BatchSource source;
    bool after_last = true;
  };

  // `steps` training steps on x against `targets` (as evaluate() takes them), one launch; each
  // step: the forward pass, the loss and its gradient (the metrics added as the loss kernels add
  // them, the step counted on the optimizer's counter), the backward GEMMs and bias gradients
  // into the parameters' gradients, optimizer's update of every parameter, as its rule says
  // (UpdateRule), and, with `next`, the next batch's gather into x and the labels. Without
  // `next` the batch is the caller's, and a launch is one step. optimizer must hold the network's
  // parameters. Unsplit tiles only (forward splits 1); clusters share their K. Throws
  // gemm_mlp::Error for steps < 1, several steps without `next`, `next` with the squared error
  // (its targets are no labels), a source whose rows are not x's, or several steps on a batch
  // that is not a full one. The caller keeps a launch's steps after the first on full batches
  // within one epoch (its order), as engine::Trainer::steps does. The first launch of each count
  // of steps builds its plan (and waits for the device once where it needs more counters).
  void train(Context& ctx, const Tensor& x, const void* targets, Metrics& metrics,
             Optimizer& optimizer, const NextBatch* next = nullptr, int steps = 1);

  // Waits for the context's stream; throws gemm_mlp::Error naming the unit, its counter, the
  // target and the count reached when a launch since the last check gave up on a wait.
  void check(Context& ctx);

  // The last evaluation's outputs: B×outputs, a view of the kernel's own buffer.
  const Tensor& outputs() const;

  // A wait's time limit (> 0; unless set, 10 s, or the environment's GEMM_MLP_STEP_WAIT_S
  // seconds, which the constructor checks), and the grid (0: every cluster that is resident
  // at once, at most one per group of units; else at most this many blocks, and at least one
  // cluster; waits for the device and rebuilds the plans, whose schedule is the grid's).
  void set_wait_timeout(double seconds);
  void set_grid_limit(Context& ctx, int blocks);
  // K slices per forward tile (1: unsplit, the default; 1..64): each slice a unit writing a
  // partial tile, then a unit adding them in slice order. Waits for the device; rebuilds the plans.
  void set_forward_splits(Context& ctx, int splits);
  // Blocks per cluster (1 .. kMaxClusterBlocks; by default the largest of 8, 4 and 2 whose
  // clusters for the widest forward layer's tiles at max_batch are all resident at once, else 1,
  // as tf32_fast's cluster split-K fills one wave): every unit runs on a cluster, a
  // GEMM tile's K shared among its blocks in whole K tiles and their partial tiles added in
  // distributed shared memory in rank order, a Sum's or a Loss unit's rows shared; a Loss unit is
  // a row for each of the cluster's warps. Waits for the device; rebuilds the plans.
  void set_cluster_size(Context& ctx, int blocks);
  // Whether a GEMM of more tiles than there are clusters may run a tile a block, each with its
  // whole K, rather than a tile a cluster: where the tile cost says one is sooner
  // (step_plan::group_units; on by default). Waits for the device; rebuilds the plans.
  void set_tile_per_block(Context& ctx, bool on);
  // Whether each group of units runs on the cluster where the unit costs say it starts soonest
  // (step_plan::Assignment::Soonest; on by default), or group g on cluster g mod C (RoundRobin).
  // Waits for the device; rebuilds the plans.
  void set_schedule_by_cost(Context& ctx, bool on);
  int cluster_size() const;
  // The blocks a launch of a batch of that size runs on: an evaluation's (training_steps 0), or a
  // training launch's of that many steps (its plan has more groups of units, so more clusters).
  int grid_blocks(int batch, int training_steps = 0) const;

  // When each unit of a launch ran (the GPU's global timer, ns; its wait excluded) and where (its
  // cluster's rank-0 block: that block's multiprocessor, and the cluster's index): for each
  // multiprocessor's busy fraction. After record_timeline(true) every launch records it;
  // timeline() returns the last launch's, a unit of its plan each (waits for the device).
  // For a GEMM tile also when thread 0's K loop was done and its warpgroup's share of the tile
  // staged (k_done_ns), when every consumer's share was (all_staged_ns: their barrier passed),
  // and when the tile was stored, after the cluster's sum (stored_ns); 0 for other units.
  // wait_ns: when its wait began (the block's previous unit done). blocks: how many ran it (the
  // cluster's, or 1 for a tile a block: set_tile_per_block).
  struct UnitTime {
    long long wait_ns, start_ns, k_done_ns, all_staged_ns, stored_ns, end_ns;
    int sm, block, blocks;
    int kind, part, layer;  // the unit's step_plan::Kind and Part, as ints, and its layer
  };
  void record_timeline(bool on);
  std::vector<UnitTime> timeline(Context& ctx) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace engine
