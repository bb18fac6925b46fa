// The training step of an MLP as units of work with counted dependencies: the work list a
// persistent step kernel runs, one unit after another on each block, with the dependencies as
// counters in global memory (docs/NOTES.md, "The step as one kernel").
//
// A step of Sequential(Linear, ReLU, …, Linear) on widths d0 → d1 → … → dL at batch B, layer l
// being Y_l = act(X_l · W_lᵀ + b_l) with X_0 the batch and X_{l+1} = Y_l:
//   Forward    l, tile (i, j) of Y_l [B×d_{l+1}]: waits for row block i of Y_{l−1};
//   Loss       row block i of the logits Y_{L−1}: the loss, its gradient G_{L−1}, and the
//              block's metrics (loss sum, correct predictions) into its own slot;
//   Metrics    the slots added in block order to the run's metric counters (the same sums every
//              run, whatever order the blocks finished in), and the step counted (the updates'
//              schedule reads the count): waits for every Loss unit;
//   InputGrad  l, tile (i, j) of G_{l−1} = (G_l · W_l) ⊙ [Y_{l−1} > 0]:
//              waits for row block i of G_l;
//   WeightGrad l, tile (p, q) of dW_l = G_lᵀ · X_l [d_{l+1}×d_l]:
//              waits for G_l's columns p, all rows;
//   BiasGrad   l, slice p of db_l (the column sums of G_l): waits for the same columns;
//   Update     l, slice p (rows of W_l and of b_l): waits for its gradients, for every read of
//              those rows (Forward l in those columns, all of InputGrad l) and for Metrics;
//   Gather     the next batch's rows: waits for every read of the batch (WeightGrad 0, and the
//              Loss units' reads of the labels, through Metrics) and for the step count.
// An evaluation (Scope::Evaluate) is the Forward units, the Loss units without the gradient, and
// Metrics: the forward pass and the metrics of one batch.
// A GEMM tile may be split along K, for grids of few tiles (M = 256: 16 forward tiles of 128×128
// on 132 multiprocessors): then `slices` Slice units each write a partial tile of their own, and
// a Sum unit adds them in slice order (the same bits every run), applies the epilogue and
// signals what the whole tile would.
// Several steps in one launch are the steps' units one after the other, each step with counters
// of its own; a step's Forward tiles also wait for the step before's last reads of the
// activations they overwrite, and in layer 0 for its update of W_0 and its gather.
// The units are listed in an order where every dependency comes first, so blocks that each take
// units in list order (block b: units b, b + G, b + 2G, …) on a grid that is all resident never
// wait forever: the first unfinished unit always has its dependencies done and its block free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace engine::step_plan {

// The step's model and the sizes of its units. Widths d0..dL (at least two), batch B ≥ 1.
struct StepShape {
  std::vector<int> widths;
  int batch = 0;
};
struct UnitSizes {
  int tile_m = 128, tile_n = 128;  // every GEMM's output tile
  int loss_rows = 128;             // rows per Loss unit
  int gather_rows = 128;           // rows per Gather unit
  // K slices per tile of each GEMM (1: unsplit); a GEMM of K < splits has K slices.
  int forward_splits = 1, input_grad_splits = 1, weight_grad_splits = 1;
  // A split tile's slices start at multiples of this many k (a kernel's K tile, whose copies
  // read whole tiles): every slice's length is one, the last slice's excepted.
  int k_granule = 1;
};

enum class Kind : uint8_t {
  Forward,
  Loss,
  Metrics,
  InputGrad,
  WeightGrad,
  BiasGrad,
  Update,
  Gather
};
const char* kind_name(Kind kind);
// A GEMM unit computes its whole tile, one K slice of it, or the sum of its slices.
enum class Part : uint8_t { Whole, Slice, Sum };

// A counter and the count it must reach before a unit may start (acquire), or a counter a unit
// adds one to when it is done (release).
struct Wait {
  int counter = 0;
  int target = 0;
};

// One unit: its kind, layer and output rectangle (rows × cols from (row0, col0) of the matrix it
// writes: Y_l, G, dW_l; the slice of W_l's rows for BiasGrad and Update; batch rows for Loss and
// Gather; for Metrics, rows is the count of Loss slots it adds), then its waits and signals
// (ranges of Plan::waits and Plan::signals). A GEMM unit's K range is [k0, k0 + k_len); a Slice
// is slice `slice` of `slices`, a Sum adds all `slices`.
struct Unit {
  Kind kind = Kind::Forward;
  Part part = Part::Whole;
  int layer = 0;
  int row0 = 0, rows = 0, col0 = 0, cols = 0;
  int k0 = 0, k_len = 0;
  int slice = 0, slices = 1;
  int step = 0;  // in a plan of several steps, the unit's
  int first_wait = 0, wait_count = 0;
  int first_signal = 0, signal_count = 0;
};

struct Plan {
  std::vector<Unit> units;
  std::vector<Wait> waits;
  std::vector<int> signals;           // counter indices
  std::vector<std::string> counters;  // each counter's name, for messages ("Forward 1 rows 0")
  std::vector<int> counter_totals;    // how many signals each counter receives in a step
};

// What a plan covers: a training step, or an evaluation (the forward pass, the loss without its
// gradient, the metrics).
enum class Scope : uint8_t { Step, Evaluate };

// The plan of `steps` training steps in a row (or of one evaluation), for one launch: each step's
// units after the last's, with counters of their own. Throws std::invalid_argument naming the
// problem for a shape or size that does not fit (fewer than two widths, a width, batch or size
// < 1, steps < 1, an evaluation of more than one step).
Plan make_plan(const StepShape& shape, const UnitSizes& sizes, Scope scope = Scope::Step,
               int steps = 1);

// What a unit costs, in µs, run by a cluster of blocks or by one block. A GEMM tile: a fixed part
// (the pipeline's start, the store, the barriers and the signal), more where a cluster sums its
// blocks' partial tiles, and a part per K tile of `k_tile` columns of K a block runs, which depends
// on the layout (the threads transpose an MN-major operand as it lands). Any other unit: a fixed
// part (other_us), and for an Update a part per parameter that its blocks share. handoff_us: from
// a unit's end to the start of one that waits for it (the release, the poll, the vote).
struct UnitCost {
  int k_tile;
  double fixed_us, cluster_sum_us;
  double forward_us, input_grad_us, weight_grad_us;  // a K tile of NT, NN and TN
  double other_us, update_ns_per_parameter, handoff_us;
};
// The GEMM tiles' parts fitted to the default model's training timeline on the H200 under the
// rule before, which ran every run of more tiles than clusters a tile a block (docs/results/
// archive/step_timeline_train_count_rule.csv: clusters of 4 and 8, a tile a cluster and a tile a
// block); the other units' to the timeline after it (docs/results/archive/
// step_timeline_train_round_robin.csv: Loss 3.8, BiasGrad 3.5, Metrics 2.5 µs; an Update of
// 131,000 parameters 10.4 µs on 4 blocks and 6.7 on 8; 1.1–1.3 µs from a unit's end to its
// dependant's start).
constexpr UnitCost kTf32UnitCost{32, 5.0, 1.3, 0.5, 1.1, 1.3, 3.5, 0.22, 1.2};
constexpr UnitCost kTf32x3UnitCost{32, 5.0, 1.3, 1.6, 2.2, 2.4, 3.5, 0.22, 1.2};

// The cost model's time of unit u run by `blocks` blocks: a cluster's, each its share, or 1.
double unit_us(const Unit& u, int blocks, const UnitCost& cost);

// How a kernel of clusters of `size` blocks runs a plan: groups of units (below, schedule_groups
// says which cluster runs each). A group is one unit that every block of the cluster runs, each its
// share; or, where per_block, up to `size` units that the blocks take one each (rank r unit
// first + r, alone: a GEMM tile with its whole K). A run of consecutive Whole GEMM tiles of one
// kind, layer and step with more tiles than `clusters` (the clusters the launch may use) is cut
// into per-block groups where `cost` says its waves of tiles with their whole K take less time
// than its waves of tiles each split across a cluster. The units of a group never wait on one
// another (they are tiles of one GEMM), so groups in list order are a schedule as the units are.
// Otherwise (size 1, a shorter run, or a run whose K makes a tile a block slower): a group a unit.
struct Group {
  int first = 0, count = 1;
  bool per_block = false;
};
std::vector<Group> group_units(const Plan& plan, int size, int clusters, const UnitCost& cost);

// Which cluster runs which groups: cluster c runs groups[first[c]] … groups[first[c + 1] − 1] in
// that order, each cluster's in list order. Then no grid that is all resident deadlocks, whichever
// cluster runs each group: the first unfinished group has every dependency done, and its cluster
// has finished every group before it.
struct Schedule {
  std::vector<Group> groups;
  std::vector<int> first;  // clusters + 1 entries
};
// RoundRobin: group g on cluster g mod clusters. Soonest: each group, in list order, on the
// cluster where `cost` says it starts soonest (that cluster done with its groups before, and the
// group's waits met, by the ends the schedule gives the groups before it); ties to the lowest.
enum class Assignment : uint8_t { RoundRobin, Soonest };
Schedule schedule_groups(const Plan& plan, const std::vector<Group>& groups, int size, int clusters,
                         const UnitCost& cost, Assignment assignment);
// What `cost` says a schedule of clusters of `size` blocks takes, µs: its last group's end.
double estimated_us(const Plan& plan, const Schedule& schedule, int size, const UnitCost& cost);

// What a step kernel reports when a unit's wait on a counter ran out of time (a bounded spin):
// the unit's index in the plan, the wait's index in Plan::waits, and the count the counter had.
struct WaitTimeout {
  int unit = 0;
  int wait = 0;
  int reached = 0;
};

// The message for such a report, naming the unit (kind, layer, step, rectangle) and the counter
// with its target and the count it stopped at; or, for a report that does not fit the plan (a
// unit or wait out of range, a wait not the unit's), a message saying so with the numbers.
std::string describe(const Plan& plan, const WaitTimeout& timeout);

// "" when the plan is well formed: every wait names a counter, its target is at most what the
// counter receives, and every counter it waits on is signalled only by earlier units (so list
// order is a schedule); else the first problem found, naming the unit and the counter.
std::string check_plan(const Plan& plan);

}  // namespace engine::step_plan
