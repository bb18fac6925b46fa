// The step plan (engine/step_plan.h): every unit's output covered once, no two units that touch
// the same data left unordered by the counters, no grid that fits on the device stuck, and the
// units, run on the CPU in any order such a grid allows, the engine's own training step; the same
// for an evaluation's plan and the trainer's evaluate.
#include "engine/step_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/engine.h"
#include "expect_error.h"
#include "random_data.h"

namespace {

using engine::Tensor;
using engine::step_plan::Assignment;
using engine::step_plan::estimated_us;
using engine::step_plan::Group;
using engine::step_plan::group_units;
using engine::step_plan::Kind;
using engine::step_plan::kTf32UnitCost;
using engine::step_plan::kTf32x3UnitCost;
using engine::step_plan::make_plan;
using engine::step_plan::Part;
using engine::step_plan::Plan;
using engine::step_plan::Schedule;
using engine::step_plan::schedule_groups;
using engine::step_plan::Scope;
using engine::step_plan::StepShape;
using engine::step_plan::Unit;
using engine::step_plan::UnitCost;
using engine::step_plan::UnitSizes;

// A rectangle of one of the step's matrices: X (the batch), labels, Y_l, G_l (the gradient at
// Y_l), W_l, b_l, dW_l, db_l, the Loss units' metrics by batch row ("loss metrics", one column),
// the run's metric counters ("metrics", one cell) and the step count ("step count", one cell);
// rows [r0, r1), columns [c0, c1).
struct Region {
  std::string matrix;
  int r0, r1, c0, c1;
};
bool overlap(const Region& a, const Region& b) {
  return a.matrix == b.matrix && a.r0 < b.r1 && b.r0 < a.r1 && a.c0 < b.c1 && b.c0 < a.c1;
}

// What a unit reads and writes, from the step's arithmetic (engine/step_plan.h's header). A GEMM
// unit reads its operands over its K range [k0, k1); a Slice writes its own partial tile (a
// matrix of its own, one row per slice), and the Sum reads them all and the epilogue's inputs.
struct Access {
  std::vector<Region> reads, writes;
};
Access access(const Unit& u, const StepShape& s, Scope scope = Scope::Step) {
  const int layers = static_cast<int>(s.widths.size()) - 1, l = u.layer;
  const auto& d = s.widths;
  auto m = [](const char* name, int layer) { return std::string(name) + std::to_string(layer); };
  auto input = [&](int layer) { return layer == 0 ? std::string("X") : m("Y", layer - 1); };
  const int r1 = u.row0 + u.rows, c1 = u.col0 + u.cols, k0 = u.k0, k1 = u.k0 + u.k_len;
  Access a;
  std::vector<Region> operands, epilogue;
  Region out{};
  switch (u.kind) {
    case Kind::Forward:  // Y_l tile = act(X_l rows · W_l rows(cols of the tile)ᵀ + b_l)
      operands = {{input(l), u.row0, r1, k0, k1}, {m("W", l), u.col0, c1, k0, k1}};
      epilogue = {{m("b", l), u.col0, c1, 0, 1}};
      out = {m("Y", l), u.row0, r1, u.col0, c1};
      break;
    case Kind::InputGrad:  // G_{l−1} tile = G_l rows · W_l cols, masked by Y_{l−1}
      operands = {{m("G", l), u.row0, r1, k0, k1}, {m("W", l), k0, k1, u.col0, c1}};
      epilogue = {{m("Y", l - 1), u.row0, r1, u.col0, c1}};
      out = {m("G", l - 1), u.row0, r1, u.col0, c1};
      break;
    case Kind::WeightGrad:  // dW_l tile = G_l(rows k, cols p)ᵀ · X_l(rows k, cols q)
      operands = {{m("G", l), k0, k1, u.row0, r1}, {input(l), k0, k1, u.col0, c1}};
      out = {m("dW", l), u.row0, r1, u.col0, c1};
      break;
    case Kind::Loss:  // an evaluation's writes no gradient
      a.reads = {{m("Y", layers - 1), u.row0, r1, 0, d[layers]}, {"labels", u.row0, r1, 0, 1}};
      a.writes = {{"loss metrics", u.row0, r1, 0, 1}};
      if (scope == Scope::Step) a.writes.push_back({m("G", layers - 1), u.row0, r1, 0, d[layers]});
      return a;
    case Kind::Metrics:  // a training step's also counts the step
      a.reads = {{"loss metrics", 0, s.batch, 0, 1}};
      a.writes = {{"metrics", 0, 1, 0, 1}};
      if (scope == Scope::Step) a.writes.push_back({"step count", 0, 1, 0, 1});
      return a;
    case Kind::BiasGrad:
      a.reads = {{m("G", l), 0, s.batch, u.row0, r1}};
      a.writes = {{m("db", l), u.row0, r1, 0, 1}};
      return a;
    case Kind::Update:
      a.reads = {{m("dW", l), u.row0, r1, 0, d[l]},
                 {m("db", l), u.row0, r1, 0, 1},
                 {"step count", 0, 1, 0, 1}};
      a.writes = {{m("W", l), u.row0, r1, 0, d[l]}, {m("b", l), u.row0, r1, 0, 1}};
      return a;
    case Kind::Gather:  // the step count names the batch
      a.reads = {{"step count", 0, 1, 0, 1}};
      a.writes = {{"X", u.row0, r1, 0, d[0]}, {"labels", u.row0, r1, 0, 1}};
      return a;
  }
  const std::string partials =
      "partials of " + out.matrix + " at " + std::to_string(u.row0) + "," + std::to_string(u.col0);
  switch (u.part) {
    case Part::Whole:
      a.reads = operands;
      a.reads.insert(a.reads.end(), epilogue.begin(), epilogue.end());
      a.writes = {out};
      break;
    case Part::Slice:
      a.reads = operands;
      a.writes = {{partials, u.slice, u.slice + 1, 0, 1}};
      break;
    case Part::Sum:
      a.reads = epilogue;
      a.reads.push_back({partials, 0, u.slices, 0, 1});
      a.writes = {out};
      break;
  }
  return a;
}

// happens[v][u]: unit v is done before unit u starts, through the counters (a wait whose target is
// the counter's total orders every unit signalling it first), closed transitively.
std::vector<std::vector<bool>> happens_before(const Plan& plan) {
  const size_t n = plan.units.size();
  std::vector<std::vector<int>> signallers(plan.counters.size());
  for (size_t v = 0; v < n; ++v) {
    const Unit& u = plan.units[v];
    for (int s = u.first_signal; s < u.first_signal + u.signal_count; ++s)
      signallers[plan.signals[s]].push_back(static_cast<int>(v));
  }
  std::vector<std::vector<bool>> hb(n, std::vector<bool>(n, false));
  for (size_t u = 0; u < n; ++u) {  // list order is a schedule: every predecessor comes first
    const Unit& unit = plan.units[u];
    for (int w = unit.first_wait; w < unit.first_wait + unit.wait_count; ++w) {
      const auto& wait = plan.waits[w];
      if (wait.target < plan.counter_totals[wait.counter]) continue;  // orders no unit in full
      for (int v : signallers[wait.counter]) {
        hb[v][u] = true;
        for (size_t x = 0; x < n; ++x)
          if (hb[x][v]) hb[x][u] = true;
      }
    }
  }
  return hb;
}

// "" when every two units that touch the same data (one writing) are ordered by the counters in
// list order, which is the step's order; else the first pair that is not.
std::string first_race(const Plan& plan, const StepShape& shape, Scope scope = Scope::Step) {
  const auto hb = happens_before(plan);
  std::vector<Access> acc;
  for (const Unit& u : plan.units) acc.push_back(access(u, shape, scope));
  auto describe = [&](size_t i) {
    const Unit& u = plan.units[i];
    return std::string(engine::step_plan::kind_name(u.kind)) + " " + std::to_string(u.layer) +
           " at (" + std::to_string(u.row0) + ", " + std::to_string(u.col0) + ")";
  };
  for (size_t a = 0; a < acc.size(); ++a)
    for (size_t b = a + 1; b < acc.size(); ++b) {
      bool conflict = false;
      for (const Region& w : acc[a].writes) {
        for (const Region& r : acc[b].reads) conflict |= overlap(w, r);
        for (const Region& x : acc[b].writes) conflict |= overlap(w, x);
      }
      for (const Region& w : acc[b].writes)
        for (const Region& r : acc[a].reads) conflict |= overlap(w, r);
      if (conflict && !hb[a][b]) return describe(a) + " and " + describe(b) + " are not ordered";
    }
  return "";
}

// How many units write each element of each matrix: every output of the scope exactly once a
// step, and nothing else (an evaluation writes Y_l and the metrics only).
void expect_each_output_written_once(const Plan& plan, const StepShape& shape,
                                     Scope scope = Scope::Step, int steps = 1) {
  std::map<std::string, std::map<std::pair<int, int>, int>> written;
  for (const Unit& u : plan.units)
    for (const Region& w : access(u, shape, scope).writes)
      for (int r = w.r0; r < w.r1; ++r)
        for (int c = w.c0; c < w.c1; ++c) ++written[w.matrix][{r, c}];
  const int layers = static_cast<int>(shape.widths.size()) - 1;
  const auto& d = shape.widths;
  std::map<std::string, std::pair<int, int>> sizes = {{"loss metrics", {shape.batch, 1}},
                                                      {"metrics", {1, 1}}};
  if (scope == Scope::Step) {
    sizes["X"] = {shape.batch, d[0]}, sizes["labels"] = {shape.batch, 1};
    sizes["step count"] = {1, 1};
  }
  for (int l = 0; l < layers; ++l) {
    const std::string n = std::to_string(l);
    sizes["Y" + n] = {shape.batch, d[l + 1]};
    if (scope == Scope::Evaluate) continue;
    sizes["G" + n] = {shape.batch, d[l + 1]};
    sizes["W" + n] = sizes["dW" + n] = {d[l + 1], d[l]};
    sizes["b" + n] = sizes["db" + n] = {d[l + 1], 1};
  }
  for (const auto& [matrix, cells] : written)  // a split tile's partials are its own scratch
    if (matrix.rfind("partials of ", 0) != 0) {
      EXPECT_EQ(sizes.count(matrix), 1u) << matrix << " is written but is no output of the scope";
    }
  for (const auto& [matrix, size] : sizes) {
    const auto& cells = written[matrix];
    EXPECT_EQ(static_cast<int64_t>(cells.size()), int64_t(size.first) * size.second) << matrix;
    for (const auto& [cell, count] : cells) {
      ASSERT_EQ(count, steps) << matrix << " (" << cell.first << ", " << cell.second << ")";
      ASSERT_LT(cell.first, size.first) << matrix;
      ASSERT_LT(cell.second, size.second) << matrix;
    }
  }
}

// Runs the plan on `grid` simulated blocks, block b taking units b, b + grid, … in turn, one
// runnable block at random at each move, a unit starting only once its waits are met, and
// run(unit) doing its work. Returns false when no block can move before every unit is done (a
// deadlock).
bool runs_to_the_end(const Plan& plan, int grid, std::mt19937& rng,
                     const std::function<void(const Unit&)>& run = nullptr) {
  std::vector<int> count(plan.counters.size(), 0);
  std::vector<size_t> next(grid);
  for (int b = 0; b < grid; ++b) next[b] = b;
  size_t done = 0;
  while (done < plan.units.size()) {
    std::vector<int> runnable;
    for (int b = 0; b < grid; ++b) {
      if (next[b] >= plan.units.size()) continue;
      const Unit& u = plan.units[next[b]];
      bool ready = true;
      for (int w = u.first_wait; w < u.first_wait + u.wait_count; ++w)
        ready &= count[plan.waits[w].counter] >= plan.waits[w].target;
      if (ready) runnable.push_back(b);
    }
    if (runnable.empty()) return false;
    const int b = runnable[std::uniform_int_distribution<size_t>(0, runnable.size() - 1)(rng)];
    const Unit& u = plan.units[next[b]];
    if (run) run(u);
    for (int s = u.first_signal; s < u.first_signal + u.signal_count; ++s) ++count[plan.signals[s]];
    next[b] += grid;
    ++done;
  }
  return true;
}

struct Case {
  StepShape shape;
  UnitSizes sizes;
};
std::vector<Case> cases() {
  return {
      {{{784, 1024, 1024, 10}, 256}, {128, 128, 128, 128}},  // the default model
      {{{784, 512, 512, 10}, 128}, {128, 256, 64, 128}},
      {{{37, 61, 5}, 19}, {16, 8, 7, 5}},         // odd widths and batch, tiles that do not divide
      {{{3, 2}, 1}, {128, 128, 128, 128}},        // one layer, tiles larger than everything
      {{{9, 17, 33, 4, 3}, 11}, {4, 16, 3, 11}},  // four layers
      // split along K: the default model as a 132-multiprocessor grid needs it; slices that do
      // not divide K; more splits than K (K slices of one)
      {{{784, 1024, 1024, 10}, 256}, {128, 128, 128, 128, 4, 3, 2}},
      {{{37, 61, 5}, 19}, {16, 8, 7, 5, 3, 5, 4}},
      {{{3, 2}, 1}, {128, 128, 128, 128, 8, 8, 8}},
  };
}

// The cases without the default model's widths, for the checks of several steps (the default
// model's take the race check minutes).
std::vector<Case> small_cases() {
  std::vector<Case> small;
  for (const Case& c : cases())
    if (c.shape.widths[0] < 784) small.push_back(c);
  return small;
}

TEST(StepPlan, EveryOutputIsWrittenOnceAndTheListIsASchedule) {
  for (const Scope scope : {Scope::Step, Scope::Evaluate})
    for (const Case& c : cases()) {
      const Plan plan = make_plan(c.shape, c.sizes, scope);
      EXPECT_EQ(engine::step_plan::check_plan(plan), "");
      expect_each_output_written_once(plan, c.shape, scope);
    }
  for (const Case& c : small_cases()) {  // three training steps in one plan
    const Plan plan = make_plan(c.shape, c.sizes, Scope::Step, 3);
    EXPECT_EQ(engine::step_plan::check_plan(plan), "");
    expect_each_output_written_once(plan, c.shape, Scope::Step, 3);
    EXPECT_EQ(plan.units.size(), 3 * make_plan(c.shape, c.sizes).units.size());
    EXPECT_EQ(plan.units.back().step, 2);
  }
}

// An evaluation is the step's forward pass and loss, without a gradient: its units are the
// step's Forward, Loss and Metrics units, in the same order.
TEST(StepPlan, AnEvaluationIsTheStepsForwardPassAndMetrics) {
  for (const Case& c : cases()) {
    const Plan step = make_plan(c.shape, c.sizes),
               eval = make_plan(c.shape, c.sizes, Scope::Evaluate);
    std::vector<const Unit*> forward;
    for (const Unit& u : step.units)
      if (u.kind == Kind::Forward || u.kind == Kind::Loss || u.kind == Kind::Metrics)
        forward.push_back(&u);
    ASSERT_EQ(eval.units.size(), forward.size());
    for (size_t i = 0; i < forward.size(); ++i) {
      EXPECT_EQ(eval.units[i].kind, forward[i]->kind) << i;
      EXPECT_EQ(eval.units[i].row0, forward[i]->row0) << i;
      EXPECT_EQ(eval.units[i].col0, forward[i]->col0) << i;
      EXPECT_EQ(eval.units[i].k0, forward[i]->k0) << i;
    }
    EXPECT_EQ(eval.units.back().kind, Kind::Metrics);
  }
}

// The slices of a split tile cover its K once, in order, and its Sum follows them.
TEST(StepPlan, SlicesCoverTheirTilesKAndTheSumFollows) {
  int split_tiles = 0;
  for (const Case& c : cases()) {
    const Plan plan = make_plan(c.shape, c.sizes);
    for (size_t i = 0; i < plan.units.size(); ++i) {
      const Unit& sum = plan.units[i];
      if (sum.part != Part::Sum) continue;
      ++split_tiles;
      ASSERT_GE(i, static_cast<size_t>(sum.slices));
      ASSERT_GE(sum.slices, 2);
      int k = 0;
      for (int s = 0; s < sum.slices; ++s) {
        const Unit& slice = plan.units[i - sum.slices + s];
        ASSERT_EQ(slice.part, Part::Slice);
        EXPECT_EQ(slice.kind, sum.kind);
        EXPECT_EQ(slice.row0, sum.row0);
        EXPECT_EQ(slice.col0, sum.col0);
        EXPECT_EQ(slice.slice, s);
        EXPECT_EQ(slice.k0, k);
        EXPECT_GE(slice.k_len, 1);
        k += slice.k_len;
      }
      EXPECT_EQ(k, sum.k_len);
    }
  }
  EXPECT_GT(split_tiles, 100);
}

// With a K granule (a kernel's K tile), every slice but a tile's last is whole granules long, so
// that each starts at one.
TEST(StepPlan, SlicesStartAtTheGranule) {
  UnitSizes sizes;
  sizes.forward_splits = 4;
  sizes.k_granule = 32;
  const Plan plan = make_plan({{784, 1024, 37, 10}, 256}, sizes, Scope::Evaluate);
  std::vector<int> slices_per_layer(3, 0);
  for (const Unit& u : plan.units) {
    if (u.part != Part::Slice) continue;
    EXPECT_EQ(u.k0 % 32, 0) << "layer " << u.layer << " slice " << u.slice;
    if (u.slice + 1 < u.slices) {
      EXPECT_EQ(u.k_len % 32, 0) << "layer " << u.layer;
    }
    if (u.slice == 0 && u.row0 == 0 && u.col0 == 0) slices_per_layer[u.layer] = u.slices;
  }
  EXPECT_EQ(slices_per_layer[0], 4);  // 784: 196 → 224-long slices (224, 224, 224, 112)
  EXPECT_EQ(slices_per_layer[1], 4);  // 1024: 256 each
  EXPECT_EQ(slices_per_layer[2], 2);  // 37: 10 → 32, then 5
}

TEST(StepPlan, UnitsThatShareDataAreOrderedByTheCounters) {
  for (const Scope scope : {Scope::Step, Scope::Evaluate})
    for (const Case& c : cases()) {
      const Plan plan = make_plan(c.shape, c.sizes, scope);
      EXPECT_EQ(first_race(plan, c.shape, scope), "") << c.shape.widths.size() - 1 << " layers";
    }
}

// Several steps in one plan: every hazard between one step's units and the next's (the weights,
// the activations, the gradients, the batch, the step count) is ordered too.
TEST(StepPlan, StepsInARowAreOrderedByTheCounters) {
  for (const Case& c : small_cases()) {
    const Plan plan = make_plan(c.shape, c.sizes, Scope::Step, 3);
    EXPECT_EQ(first_race(plan, c.shape), "") << c.shape.widths.size() - 1 << " layers";
  }
}

// Without the wait of a step's first-layer Forward tile for the step before's update of W_0, or
// for its gather, the tile reads weights or a batch still being written.
TEST(StepPlan, AForwardTileThatDoesNotWaitForTheStepBeforeRaces) {
  const Case c = cases()[2];
  // Its waits: every Update 1 of step 0, then Update 0 of its 8 columns (one block of 16 rows of
  // W_0), then the gather of its 16 rows (4 blocks of 5).
  for (const auto& [dropped, writer] : {std::pair{1, "Update 0"}, std::pair{2, "Gather"}}) {
    Plan plan = make_plan(c.shape, c.sizes, Scope::Step, 2);
    const auto forward = std::find_if(plan.units.begin(), plan.units.end(), [](const Unit& u) {
      return u.kind == Kind::Forward && u.layer == 0 && u.step == 1;
    });
    ASSERT_NE(forward, plan.units.end());
    ASSERT_EQ(forward->wait_count, 6);
    const int last = dropped == 1 ? 1 : 5;  // the update's one wait, or the gather's four
    for (int w = dropped; w <= last; ++w)
      plan.waits[forward->first_wait + w] = plan.waits[forward->first_wait];
    const std::string race = first_race(plan, c.shape);
    EXPECT_NE(race.find(writer), std::string::npos) << race;
    EXPECT_NE(race.find("Forward 0"), std::string::npos) << race;
  }
}

// The race check can fail: a plan with any one wait removed races or the removed wait was
// redundant; removing the update's wait on the weights' last reads must race.
TEST(StepPlan, ARemovedWaitIsARace) {
  const Case c = cases()[2];
  Plan plan = make_plan(c.shape, c.sizes);
  const auto update = std::find_if(plan.units.begin(), plan.units.end(), [](const Unit& u) {
    return u.kind == Kind::Update && u.layer == 1;
  });
  ASSERT_NE(update, plan.units.end());
  ASSERT_GT(update->wait_count, 1);
  // Its wait before the last (Metrics): every InputGrad 1 tile, the reads of W_1.
  plan.waits[update->first_wait + update->wait_count - 2] =
      plan.waits[update->first_wait + update->wait_count - 1];
  const std::string race = first_race(plan, c.shape);
  EXPECT_NE(race.find("InputGrad 1"), std::string::npos) << race;
  EXPECT_NE(race.find("Update 1"), std::string::npos) << race;
}

// A Gather unit reads the step count, which names the batch it copies: without its wait for
// Metrics, it may read the count before the step is counted.
TEST(StepPlan, AGatherThatDoesNotWaitForTheMetricsRaces) {
  const Case c = cases()[2];
  Plan plan = make_plan(c.shape, c.sizes);
  const auto gather = std::find_if(plan.units.begin(), plan.units.end(),
                                   [](const Unit& u) { return u.kind == Kind::Gather; });
  ASSERT_NE(gather, plan.units.end());
  ASSERT_EQ(gather->wait_count, 2);  // every WeightGrad 0 tile, then Metrics
  ASSERT_EQ(plan.counters[plan.waits[gather->first_wait + 1].counter].rfind("Metrics", 0), 0u);
  gather->wait_count = 1;
  const std::string race = first_race(plan, c.shape);
  EXPECT_NE(race.find("Gather"), std::string::npos) << race;
  EXPECT_NE(race.find("Metrics"), std::string::npos) << race;
}

TEST(StepPlan, ASumThatDoesNotWaitForItsSlicesIsARace) {
  const Case c = cases()[6];
  Plan plan = make_plan(c.shape, c.sizes);
  const auto sum = std::find_if(plan.units.begin(), plan.units.end(),
                                [](const Unit& u) { return u.part == Part::Sum; });
  ASSERT_NE(sum, plan.units.end());
  ASSERT_EQ(sum->wait_count, 1);
  sum->wait_count = 0;
  const std::string race = first_race(plan, c.shape);
  EXPECT_NE(race.find(engine::step_plan::kind_name(sum->kind)), std::string::npos) << race;
  EXPECT_NE(race, "");
}

TEST(StepPlan, ACounterWaitedOnBeforeItIsSignalledIsNamed) {
  Plan plan = make_plan({{5, 4, 3}, 6}, {2, 2, 2, 2});
  std::swap(plan.units[0], plan.units.back());  // the gather first
  EXPECT_NE(engine::step_plan::check_plan(plan).find("the list is not a schedule"),
            std::string::npos);
}

TEST(StepPlan, NoResidentGridDeadlocks) {
  std::mt19937 rng(5);
  for (const int steps : {1, 3})
    for (const Scope scope : {Scope::Step, Scope::Evaluate})
      for (const Case& c : cases()) {
        if (scope == Scope::Evaluate && steps > 1) continue;
        const Plan plan = make_plan(c.shape, c.sizes, scope, steps);
        for (int grid : {1, 2, 3, 7, 64, 132, static_cast<int>(plan.units.size()) + 3})
          for (int trial = 0; trial < 3; ++trial)
            EXPECT_TRUE(runs_to_the_end(plan, grid, rng)) << "grid " << grid;
      }
}

// Runs a schedule of the plan's groups on its simulated clusters as the step kernel does: cluster
// c takes its groups in turn, one runnable cluster at random at each move; a group starts once
// every unit of it may (its blocks vote) and its units' signals come when all are done. Returns
// false on a deadlock.
bool groups_run_to_the_end(const Plan& plan, const Schedule& schedule, std::mt19937& rng) {
  const int grid = static_cast<int>(schedule.first.size()) - 1;
  std::vector<int> count(plan.counters.size(), 0);
  std::vector<int> next(schedule.first.begin(), schedule.first.end() - 1);
  size_t done = 0;
  while (done < schedule.groups.size()) {
    std::vector<int> runnable;
    for (int c = 0; c < grid; ++c) {
      if (next[c] >= schedule.first[c + 1]) continue;
      bool ready = true;
      const Group& g = schedule.groups[next[c]];
      for (int u = g.first; u < g.first + g.count; ++u)
        for (int w = plan.units[u].first_wait;
             w < plan.units[u].first_wait + plan.units[u].wait_count; ++w)
          ready &= count[plan.waits[w].counter] >= plan.waits[w].target;
      if (ready) runnable.push_back(c);
    }
    if (runnable.empty()) return false;
    const int c = runnable[std::uniform_int_distribution<size_t>(0, runnable.size() - 1)(rng)];
    const Group& g = schedule.groups[next[c]];
    for (int u = g.first; u < g.first + g.count; ++u)
      for (int s = plan.units[u].first_signal;
           s < plan.units[u].first_signal + plan.units[u].signal_count; ++s)
        ++count[plan.signals[s]];
    ++next[c];
    ++done;
  }
  return true;
}

// Whether a schedule runs every one of `groups` once, each cluster's in list order.
::testing::AssertionResult runs_each_group_once_in_order(const std::vector<Group>& groups,
                                                         const Schedule& schedule) {
  if (schedule.first.empty() || schedule.first.front() != 0 ||
      schedule.first.back() != static_cast<int>(schedule.groups.size()))
    return ::testing::AssertionFailure() << "the clusters' ranges do not cover the groups";
  std::vector<int> seen(groups.size(), 0);
  for (size_t c = 0; c + 1 < schedule.first.size(); ++c)
    for (int g = schedule.first[c]; g < schedule.first[c + 1]; ++g) {
      const auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& x) {
        return x.first == schedule.groups[g].first && x.count == schedule.groups[g].count &&
               x.per_block == schedule.groups[g].per_block;
      });
      if (it == groups.end())
        return ::testing::AssertionFailure() << "cluster " << c << " runs a group not given";
      ++seen[it - groups.begin()];
      if (g > schedule.first[c] && schedule.groups[g - 1].first >= schedule.groups[g].first)
        return ::testing::AssertionFailure() << "cluster " << c << "'s groups are out of order";
    }
  for (size_t g = 0; g < groups.size(); ++g)
    if (seen[g] != 1)
      return ::testing::AssertionFailure() << "group " << g << " runs " << seen[g] << " times";
  return ::testing::AssertionSuccess();
}

// A cost under which a tile a block always wins where a run has more tiles than clusters: the most
// per-block groups, for the tests of their order.
constexpr UnitCost kWholeKIsFree{32, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};

TEST(StepPlan, GroupsCoverTheListInOrderAndTheirTilesNeverWaitOnEachOther) {
  std::mt19937 rng(11);
  for (const int steps : {1, 2})
    for (const Case& c : steps == 1 ? cases() : small_cases()) {
      const Plan plan = make_plan(c.shape, c.sizes, Scope::Step, steps);
      for (const int size : {1, 2, 4, 8})
        for (const int clusters : {1, 3, 30}) {
          SCOPED_TRACE("size " + std::to_string(size) + ", clusters " + std::to_string(clusters));
          const std::vector<Group> groups = group_units(plan, size, clusters, kWholeKIsFree);
          int next = 0;
          for (const Group& g : groups) {
            ASSERT_EQ(g.first, next);
            ASSERT_GE(g.count, 1);
            ASSERT_LE(g.count, g.per_block ? size : 1);
            std::set<int> signalled;  // by the group's units
            for (int u = g.first; u < g.first + g.count; ++u) {
              const Unit& unit = plan.units[u];
              if (g.per_block) {
                ASSERT_TRUE(unit.kind == Kind::Forward || unit.kind == Kind::InputGrad ||
                            unit.kind == Kind::WeightGrad);
                ASSERT_EQ(unit.part, Part::Whole);
                ASSERT_EQ(unit.kind, plan.units[g.first].kind);
                ASSERT_EQ(unit.layer, plan.units[g.first].layer);
                ASSERT_EQ(unit.step, plan.units[g.first].step);
              }
              for (int s = unit.first_signal; s < unit.first_signal + unit.signal_count; ++s)
                signalled.insert(plan.signals[s]);
            }
            for (int u = g.first; u < g.first + g.count; ++u)
              for (int w = plan.units[u].first_wait;
                   w < plan.units[u].first_wait + plan.units[u].wait_count; ++w)
                ASSERT_EQ(signalled.count(plan.waits[w].counter), 0u)
                    << "unit " << u << " waits on its own group";
            next += g.count;
          }
          ASSERT_EQ(next, static_cast<int>(plan.units.size()));
          for (const int grid : {1, 2, 7, clusters})
            for (const Assignment assignment : {Assignment::RoundRobin, Assignment::Soonest}) {
              const Schedule schedule =
                  schedule_groups(plan, groups, size, grid, kTf32UnitCost, assignment);
              ASSERT_EQ(schedule.first.size(), static_cast<size_t>(grid) + 1);
              EXPECT_TRUE(runs_each_group_once_in_order(groups, schedule));
              EXPECT_TRUE(groups_run_to_the_end(plan, schedule, rng))
                  << "grid " << grid << ", assignment " << static_cast<int>(assignment);
            }
        }
    }
}

// The GEMMs of a plan that run a tile a block, with their tile counts, by kind and layer.
std::map<std::pair<Kind, int>, int> per_block_gemms(const Plan& plan,
                                                    const std::vector<Group>& groups) {
  std::map<std::pair<Kind, int>, int> per_block;
  for (const Group& g : groups)
    if (g.per_block) per_block[{plan.units[g.first].kind, plan.units[g.first].layer}] += g.count;
  return per_block;
}

TEST(StepPlan, TheDefaultModelsWeightGradientsRunATileABlock) {
  const Plan plan = make_plan({{784, 1024, 1024, 10}, 256}, {128, 128, 128, 128});
  // 56 and 64 tiles of K 256 for 30 clusters: one wave a tile a block, two or three a tile a
  // cluster; the forward and input-gradient GEMMs' 16 tiles and dW_2's 8 fit.
  const std::map<std::pair<Kind, int>, int> both = {{{Kind::WeightGrad, 0}, 56},
                                                    {{Kind::WeightGrad, 1}, 64}};
  EXPECT_EQ(per_block_gemms(plan, group_units(plan, 4, 30, kTf32UnitCost)), both);
  // In 3×TF32 a K tile costs more, and dW_0's two waves of split tiles beat one of whole ones.
  const std::map<std::pair<Kind, int>, int> dw1 = {{{Kind::WeightGrad, 1}, 64}};
  EXPECT_EQ(per_block_gemms(plan, group_units(plan, 4, 30, kTf32x3UnitCost)), dw1);
  for (const Group& g : group_units(plan, 1, 30, kTf32UnitCost)) EXPECT_FALSE(g.per_block);
  for (const Group& g : group_units(plan, 4, 132, kTf32UnitCost)) EXPECT_FALSE(g.per_block);
  // The simulation can fail: groups out of list order deadlock a single cluster.
  const std::vector<Group> groups = group_units(plan, 4, 30, kTf32UnitCost);
  const Schedule reversed{{groups.rbegin(), groups.rend()}, {0, static_cast<int>(groups.size())}};
  std::mt19937 rng(3);
  EXPECT_FALSE(groups_run_to_the_end(plan, reversed, rng));
}

// In clusters of 8 (15 of them), the default model's 16 forward tiles have K 784 or 1024: a tile
// a block would run 25–32 K tiles where a cluster's share is 4, and two waves of split tiles beat
// one of whole ones (in 3×TF32 it measured 267 µs a step against 213).
TEST(StepPlan, ATileABlockOnlyWhereItsWholeKCostsLessThanTheSplitTilesWaves) {
  const Plan plan = make_plan({{784, 1024, 1024, 10}, 256}, {128, 128, 128, 128});
  for (const UnitCost& cost : {kTf32UnitCost, kTf32x3UnitCost}) {
    const std::map<std::pair<Kind, int>, int> per_block =
        per_block_gemms(plan, group_units(plan, 8, 15, cost));
    EXPECT_EQ(per_block.count({Kind::Forward, 0}) + per_block.count({Kind::Forward, 1}), 0u);
    EXPECT_EQ(per_block.at({Kind::WeightGrad, 1}), 64);  // five waves split, one whole
  }
  // With free K tiles every run of more tiles than clusters goes a tile a block.
  EXPECT_EQ(
      per_block_gemms(plan, group_units(plan, 8, 15, kWholeKIsFree)).count({Kind::Forward, 0}), 1u);
}

// Round robin puts dW_0's tiles behind dW_1's on the clusters that ran dX_1 (the default model's
// timeline: dW_0 started at a median 78 µs, 12 after G_0 was done); the soonest cluster runs them
// as G_0 lands. The cost model's estimate of the step, clusters of 4 on 30 as on the H200.
TEST(StepPlan, GroupsOnTheSoonestClusterEndTheDefaultModelsStepSooner) {
  const Plan plan = make_plan({{784, 1024, 1024, 10}, 256}, {128, 128, 128, 128});
  for (const UnitCost& cost : {kTf32UnitCost, kTf32x3UnitCost}) {
    const std::vector<Group> groups = group_units(plan, 4, 30, cost);
    const double round_robin = estimated_us(
        plan, schedule_groups(plan, groups, 4, 30, cost, Assignment::RoundRobin), 4, cost);
    const double soonest = estimated_us(
        plan, schedule_groups(plan, groups, 4, 30, cost, Assignment::Soonest), 4, cost);
    RecordProperty(cost.forward_us == kTf32UnitCost.forward_us ? "tf32_us" : "tf32x3_us",
                   std::to_string(round_robin) + " -> " + std::to_string(soonest));
    EXPECT_LT(soonest, 0.9 * round_robin) << round_robin << " µs round robin";
  }
  // On one cluster both are the list order.
  const std::vector<Group> groups = group_units(plan, 4, 1, kTf32UnitCost);
  const Schedule one = schedule_groups(plan, groups, 4, 1, kTf32UnitCost, Assignment::Soonest);
  EXPECT_EQ(one.groups.size(), groups.size());
  EXPECT_EQ(
      estimated_us(plan, one, 4, kTf32UnitCost),
      estimated_us(plan, schedule_groups(plan, groups, 4, 1, kTf32UnitCost, Assignment::RoundRobin),
                   4, kTf32UnitCost));
}

// A Metrics unit that does not wait for every Loss unit races with the one it leaves out.
TEST(StepPlan, MetricsThatDoNotWaitForEveryLossUnitRace) {
  const Case c = cases()[2];
  Plan plan = make_plan(c.shape, c.sizes, Scope::Evaluate);
  Unit& metrics = plan.units.back();
  ASSERT_EQ(metrics.kind, Kind::Metrics);
  ASSERT_GE(metrics.wait_count, 2);
  metrics.wait_count -= 1;
  const std::string race = first_race(plan, c.shape, Scope::Evaluate);
  EXPECT_NE(race.find("Loss"), std::string::npos) << race;
  EXPECT_NE(race.find("Metrics"), std::string::npos) << race;
}

// The step's arithmetic unit by unit on the CPU, as a step kernel would do it: each GEMM tile (or
// K slice, or sum of slices) in a fixed k order, the loss by row blocks with the whole batch's
// scale, the bias gradients and the update by slices of W's rows (engine::host's losses and
// optimisers), the gather copying the next batch in.
struct StepOnTheCpu {
  StepShape shape;
  bool squared_error = false;  // else cross-entropy
  bool adam = false;           // else SGD
  bool evaluate = false;       // an evaluation's plan: the Loss units write no gradient
  engine::LrSchedule schedule;
  float momentum = 0, weight_decay = 0, beta1 = 0, beta2 = 0, eps = 0;
  // Per layer; mw, mb: SGD's velocity or Adam's first moment; vw, vb: Adam's second moment.
  std::vector<std::vector<float>> w, b, mw, mb, vw, vb, y, g, dw, db;
  std::vector<float> x, targets;  // the batch being trained on
  std::vector<int32_t> labels;
  // Batch s of a run, which step s − 1's Gather copies in (batch 0 is the first step's).
  std::vector<std::vector<float>> batches_x, batches_targets;
  std::vector<std::vector<int32_t>> batches_labels;
  std::map<std::string, std::vector<float>> partials;  // per split tile: slices × rows × cols
  std::map<int, engine::MetricCounters> loss_blocks;   // each Loss unit's, by its first row
  engine::MetricCounters metrics{};                    // the Metrics unit's sum of them
  int64_t counted = 0;  // the step count: Metrics counts each training step

  int layers() const { return static_cast<int>(shape.widths.size()) - 1; }
  const float* input(int l) const { return l == 0 ? x.data() : y[l - 1].data(); }

  // The K range's sum for element (r, c) of the unit's GEMM.
  float product(const Unit& u, int r, int c) const {
    const auto& d = shape.widths;
    const int l = u.layer;
    float acc = 0.0f;
    for (int k = u.k0; k < u.k0 + u.k_len; ++k) {
      if (u.kind == Kind::Forward) acc += input(l)[r * d[l] + k] * w[l][c * d[l] + k];
      if (u.kind == Kind::InputGrad) acc += g[l][r * d[l + 1] + k] * w[l][k * d[l] + c];
      if (u.kind == Kind::WeightGrad) acc += g[l][k * d[l + 1] + r] * input(l)[k * d[l] + c];
    }
    return acc;
  }
  // The epilogue and the store of element (r, c) of a GEMM's output.
  void store(const Unit& u, int r, int c, float v) {
    const auto& d = shape.widths;
    const int l = u.layer;
    if (u.kind == Kind::Forward) {
      v += b[l][c];
      y[l][r * d[l + 1] + c] = l < layers() - 1 ? std::fmax(v, 0.0f) : v;
    } else if (u.kind == Kind::InputGrad) {
      g[l - 1][r * d[l] + c] = y[l - 1][r * d[l] + c] > 0.0f ? v : 0.0f;
    } else {
      dw[l][r * d[l] + c] = v;
    }
  }

  void run(const Unit& u) {
    const auto& d = shape.widths;
    const int l = u.layer, out = d[layers()];
    const std::string tile = std::to_string(int(u.kind)) + "/" + std::to_string(l) + "/" +
                             std::to_string(u.row0) + "/" + std::to_string(u.col0);
    switch (u.kind) {
      case Kind::Forward:
      case Kind::InputGrad:
      case Kind::WeightGrad: {
        auto& part = partials[tile];
        if (u.part == Part::Slice && part.empty())
          part.assign(size_t(u.slices) * u.rows * u.cols, 0);
        for (int r = 0; r < u.rows; ++r)
          for (int c = 0; c < u.cols; ++c) {
            const size_t at = size_t(r) * u.cols + c;
            if (u.part == Part::Whole) {
              store(u, u.row0 + r, u.col0 + c, product(u, u.row0 + r, u.col0 + c));
            } else if (u.part == Part::Slice) {
              part[size_t(u.slice) * u.rows * u.cols + at] = product(u, u.row0 + r, u.col0 + c);
            } else {
              float sum = 0.0f;
              for (int k = 0; k < u.slices; ++k) sum += part[size_t(k) * u.rows * u.cols + at];
              store(u, u.row0 + r, u.col0 + c, sum);
            }
          }
        break;
      }
      case Kind::Loss: {
        const size_t at = size_t(u.row0) * out;
        engine::MetricCounters* block = &loss_blocks[u.row0];
        *block = {};
        float* gradient = evaluate ? nullptr : g[l].data() + at;
        if (squared_error)  // the whole batch's scale, as ops.cpp computes it
          engine::host::squared_error(y[l].data() + at, targets.data() + at, gradient, u.rows, out,
                                      2.0f / (float(shape.batch) * float(out)), block);
        else
          engine::host::softmax_xent(y[l].data() + at, labels.data() + u.row0, gradient, u.rows,
                                     out, 1.0f / shape.batch, block);
        break;
      }
      case Kind::Metrics:  // the blocks in row order, added to the run's; a training step counted
        EXPECT_EQ(static_cast<int>(loss_blocks.size()), u.rows);
        if (!evaluate) ++counted;
        for (const auto& [row0, block] : loss_blocks) {
          metrics.loss_sum += block.loss_sum;
          metrics.correct += block.correct;
          metrics.seen += block.seen;
          metrics.bad_labels += block.bad_labels;
          metrics.bad_targets += block.bad_targets;
        }
        break;
      case Kind::BiasGrad:
        for (int p = u.row0; p < u.row0 + u.rows; ++p) {
          float sum = 0.0f;
          for (int r = 0; r < shape.batch; ++r) sum += g[l][size_t(r) * d[l + 1] + p];
          db[l][p] = sum;
        }
        break;
      case Kind::Update:
        update(w[l], dw[l], mw[l], vw[l], size_t(u.row0) * d[l], size_t(u.rows) * d[l]);
        update(b[l], db[l], mb[l], vb[l], u.row0, u.rows);
        break;
      case Kind::Gather:
        std::copy_n(batches_x.at(u.step + 1).begin() + size_t(u.row0) * d[0], size_t(u.rows) * d[0],
                    x.begin() + size_t(u.row0) * d[0]);
        std::copy_n(batches_labels.at(u.step + 1).begin() + u.row0, u.rows,
                    labels.begin() + u.row0);
        std::copy_n(batches_targets.at(u.step + 1).begin() + size_t(u.row0) * out,
                    size_t(u.rows) * out, targets.begin() + size_t(u.row0) * out);
        break;
    }
  }
  void update(std::vector<float>& p, const std::vector<float>& grad, std::vector<float>& m,
              std::vector<float>& v, size_t at, size_t n) {
    if (adam)
      engine::host::adam_step(p.data() + at, grad.data() + at, m.data() + at, v.data() + at,
                              int64_t(n), &counted, schedule, beta1, beta2, eps, weight_decay);
    else
      engine::host::sgd_step(p.data() + at, grad.data() + at, m.data() + at, int64_t(n), &counted,
                             schedule, momentum, weight_decay);
  }
};

// A small model on the CPU (13 → 17 → 9 → 4, ReLU between, batch 11), its trainer, a batch with
// labels and targets and the next batch, and the interpreter's start from the same parameters.
struct SmallModel {
  static constexpr int kIn = 13, kOut = 4;
  const StepShape shape{{kIn, 17, 9, kOut}, 11};
  engine::Context ctx{engine::Device::CPU, "cpu", 9};
  engine::Sequential net;
  engine::TrainerOptions options;
  static constexpr int kBatches = 4;  // for up to 3 steps and the batch after them
  std::vector<std::vector<float>> xs, targets;
  std::vector<std::vector<int32_t>> labels;
  StepOnTheCpu start;

  SmallModel(bool squared_error, bool adam) {
    std::mt19937_64 data_rng(3);
    for (int s = 0; s < kBatches; ++s) {
      xs.push_back(random_values(data_rng, size_t(shape.batch) * kIn));
      targets.push_back(random_values(data_rng, size_t(shape.batch) * kOut));
      labels.emplace_back(shape.batch);
      for (int i = 0; i < shape.batch; ++i) labels[s][i] = (i * (2 * s + 7)) % kOut;
    }
    net.add<engine::Linear>(ctx, kIn, 17);
    net.add<engine::ReLU>();
    net.add<engine::Linear>(ctx, 17, 9);
    net.add<engine::ReLU>();
    net.add<engine::Linear>(ctx, 9, kOut);
    options.max_batch = shape.batch;
    options.loss = squared_error ? engine::TrainerOptions::Loss::MeanSquaredError
                                 : engine::TrainerOptions::Loss::CrossEntropy;
    options.optimizer =
        adam ? engine::TrainerOptions::Optimizer::Adam : engine::TrainerOptions::Optimizer::Sgd;
    options.sgd.lr = 0.3f;  // large enough that the update shows in every parameter
    options.sgd.momentum = 0.9f;
    options.sgd.weight_decay = 0.01f;
    options.adam.lr = 0.01f;
    options.adam.weight_decay = 0.02f;

    start.shape = shape;
    start.squared_error = squared_error, start.adam = adam;
    start.schedule = {adam ? options.adam.lr : options.sgd.lr, 0};
    start.momentum = options.sgd.momentum;
    start.weight_decay = adam ? options.adam.weight_decay : options.sgd.weight_decay;
    start.beta1 = options.adam.beta1, start.beta2 = options.adam.beta2,
    start.eps = options.adam.eps;
    const auto params = net.parameters();
    for (int l = 0; l < 3; ++l) {
      start.w.push_back(params[2 * l]->value.download());
      start.b.push_back(params[2 * l + 1]->value.download());
      for (auto* state : {&start.mw, &start.vw}) state->emplace_back(start.w.back().size(), 0.0f);
      for (auto* state : {&start.mb, &start.vb}) state->emplace_back(start.b.back().size(), 0.0f);
      start.y.emplace_back(size_t(shape.batch) * shape.widths[l + 1], NAN);
      start.g.emplace_back(size_t(shape.batch) * shape.widths[l + 1], NAN);
      start.dw.emplace_back(start.w.back().size(), NAN);
      start.db.emplace_back(start.b.back().size(), NAN);
    }
    start.x = xs[0], start.labels = labels[0], start.targets = targets[0];
    start.batches_x = xs, start.batches_labels = labels, start.batches_targets = targets;
  }
  Tensor batch(int s) const {
    return Tensor::from_host(engine::Device::CPU, shape.batch, kIn, xs[s]);
  }
  Tensor target_tensor(int s) const {
    return Tensor::from_host(engine::Device::CPU, shape.batch, kOut, targets[s]);
  }
  engine::LabelTensor label_tensor(int s) const {
    return engine::LabelTensor(engine::Device::CPU, labels[s]);
  }
};

// The unit sizes the interpreter runs each plan at: tiles and loss blocks that do not divide,
// split K, and tiles larger than the model.
const std::vector<UnitSizes> kInterpreterSizes = {
    UnitSizes{4, 8, 3, 5}, UnitSizes{4, 8, 3, 5, 3, 2, 4}, UnitSizes{16, 16, 16, 16, 5, 5, 5}};

// Run in any order a resident grid allows, the units of `steps` steps give as many of the
// engine's own CPU steps: the same loss and parameters (within fp32 rounding: the GEMMs sum in
// another order), and the same bits from one order to another; with cross-entropy and SGD
// (momentum, weight decay), and with the mean squared error and Adam (whose bias correction
// reads the step count).
void expect_the_trainers_steps(bool squared_error, bool adam, int steps) {
  SmallModel model(squared_error, adam);
  ASSERT_LT(steps, SmallModel::kBatches);
  engine::Trainer trainer(model.ctx, model.net, model.options);
  for (int s = 0; s < steps; ++s) {
    if (squared_error)
      trainer.step(model.batch(s), model.target_tensor(s));
    else
      trainer.step(model.batch(s), model.label_tensor(s));
  }
  const engine::MetricTotals metrics = trainer.take_metrics();
  const auto params = model.net.parameters();

  std::mt19937 rng(11);
  std::vector<StepOnTheCpu> runs;
  for (const UnitSizes& sizes : kInterpreterSizes)
    for (int grid : {1, 4, 9}) {
      const Plan plan = make_plan(model.shape, sizes, Scope::Step, steps);
      StepOnTheCpu step = model.start;
      ASSERT_TRUE(runs_to_the_end(plan, grid, rng, [&](const Unit& u) { step.run(u); }));
      EXPECT_NEAR(step.metrics.loss_sum, metrics.loss_sum, 1e-5 * metrics.loss_sum);
      EXPECT_EQ(int64_t(step.metrics.correct), metrics.correct);
      EXPECT_EQ(int64_t(step.metrics.seen), metrics.seen);
      for (int l = 0; l < 3; ++l) {
        const std::vector<float> w = params[2 * l]->value.download();
        const std::vector<float> b = params[2 * l + 1]->value.download();
        for (size_t i = 0; i < w.size(); ++i) {
          ASSERT_NEAR(step.w[l][i], w[i], 1e-5f * (1.0f + std::fabs(w[i]))) << l << " " << i;
          ASSERT_NE(step.w[l][i], model.start.w[l][i])
              << "weight " << l << ", " << i << " not updated";
        }
        for (size_t i = 0; i < b.size(); ++i)
          ASSERT_NEAR(step.b[l][i], b[i], 1e-5f * (1.0f + std::fabs(b[i]))) << l << " " << i;
      }
      EXPECT_EQ(step.counted, steps);
      EXPECT_EQ(step.x, model.xs[steps]);
      EXPECT_EQ(step.targets, model.targets[steps]);
      EXPECT_EQ(step.labels, model.labels[steps]);
      runs.push_back(std::move(step));
    }
  for (size_t r = 1; r < runs.size(); ++r) {  // the same bits in every order, per plan
    if (r % 3 == 0) continue;
    EXPECT_EQ(runs[r].w, runs[r - 1].w) << r;
    EXPECT_EQ(runs[r].b, runs[r - 1].b) << r;
    EXPECT_EQ(runs[r].metrics.loss_sum, runs[r - 1].metrics.loss_sum) << r;
  }
}

// An evaluation's plan run in any order is the trainer's evaluate: the same metrics (the loss
// within fp32 rounding, the correct count and the count seen exactly), the same bits from one
// order to another, and the parameters untouched.
void expect_the_trainers_evaluation(bool squared_error) {
  SmallModel model(squared_error, false);
  engine::Trainer trainer(model.ctx, model.net, model.options);
  const engine::MetricTotals metrics =
      squared_error ? trainer.evaluate(model.batch(0), model.target_tensor(0))
                    : trainer.evaluate(model.batch(0), model.label_tensor(0));
  ASSERT_EQ(metrics.seen, model.shape.batch);

  std::mt19937 rng(12);
  std::vector<StepOnTheCpu> runs;
  for (const UnitSizes& sizes : kInterpreterSizes)
    for (int grid : {1, 4, 9}) {
      const Plan plan = make_plan(model.shape, sizes, Scope::Evaluate);
      StepOnTheCpu eval = model.start;
      eval.evaluate = true;
      ASSERT_TRUE(runs_to_the_end(plan, grid, rng, [&](const Unit& u) { eval.run(u); }));
      EXPECT_NEAR(eval.metrics.loss_sum, metrics.loss_sum, 1e-5 * metrics.loss_sum);
      EXPECT_EQ(int64_t(eval.metrics.correct), metrics.correct);
      EXPECT_EQ(int64_t(eval.metrics.seen), metrics.seen);
      EXPECT_EQ(eval.w, model.start.w);
      EXPECT_EQ(eval.b, model.start.b);
      runs.push_back(std::move(eval));
    }
  for (size_t r = 1; r < runs.size(); ++r) {
    if (r % 3 == 0) continue;
    EXPECT_EQ(runs[r].y, runs[r - 1].y) << r;
    EXPECT_EQ(runs[r].metrics.loss_sum, runs[r - 1].metrics.loss_sum) << r;
  }
}

TEST(StepPlan, AnEvaluationRunOnTheCpuInAnyOrderIsTheTrainersEvaluate) {
  {
    SCOPED_TRACE("cross-entropy");
    expect_the_trainers_evaluation(false);
  }
  {
    SCOPED_TRACE("mean squared error");
    expect_the_trainers_evaluation(true);
  }
}

TEST(StepPlan, RunOnTheCpuInAnyOrderItIsTheTrainersStep) {
  {
    SCOPED_TRACE("cross-entropy, SGD");
    expect_the_trainers_steps(false, false, 1);
    expect_the_trainers_steps(false, false, 3);
  }
  {
    SCOPED_TRACE("mean squared error, Adam");
    expect_the_trainers_steps(true, true, 1);
    expect_the_trainers_steps(true, true, 3);
  }
}

// A step kernel's report of a wait that ran out of time names the unit and the counter, and a
// report that does not fit the plan says so rather than reading past it.
TEST(StepPlan, ATimedOutWaitIsDescribedByItsUnitAndCounter) {
  const Plan plan = make_plan({{5, 4, 3}, 6}, {2, 2, 2, 2}, Scope::Step, 2);
  const auto forward = std::find_if(plan.units.begin(), plan.units.end(), [](const Unit& u) {
    return u.kind == Kind::Forward && u.layer == 1 && u.step == 1 && u.row0 == 2;
  });
  ASSERT_NE(forward, plan.units.end());
  const int unit = static_cast<int>(forward - plan.units.begin());
  const engine::step_plan::WaitTimeout timeout{unit, forward->first_wait, 1};
  const std::string text = engine::step_plan::describe(plan, timeout);
  EXPECT_NE(text.find("unit " + std::to_string(unit) + " (Forward 1 of step 1, rows 2..3"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("'" + plan.counters[plan.waits[forward->first_wait].counter] + "' to reach " +
                      std::to_string(plan.waits[forward->first_wait].target)),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("it stayed at 1"), std::string::npos) << text;
  EXPECT_NE(
      engine::step_plan::describe(plan, {int(plan.units.size()), 0, 0})
          .find("which the plan of " + std::to_string(plan.units.size()) + " units does not have"),
      std::string::npos);
  EXPECT_NE(engine::step_plan::describe(plan, {unit, forward->first_wait + forward->wait_count, 0})
                .find("which is not one of its"),
            std::string::npos);
}

TEST(StepPlan, ShapesThatDoNotFitAreRefused) {
  EXPECT_THROW_WITH(make_plan({{784}, 8}, {}), std::invalid_argument, "at least two widths");
  EXPECT_THROW_WITH(make_plan({{784, 0, 10}, 8}, {}), std::invalid_argument, "width 1 is 0");
  EXPECT_THROW_WITH(make_plan({{784, 10}, 0}, {}), std::invalid_argument, "the batch is 0");
  EXPECT_THROW_WITH(make_plan({{784, 10}, 8}, {128, 128, 128, 128, 0}), std::invalid_argument,
                    "every unit size and split count must be");
  EXPECT_THROW_WITH(make_plan({{784, 10}, 8}, {0, 128, 128, 128}), std::invalid_argument,
                    "every unit size and split count must be");
  EXPECT_THROW_WITH(make_plan({{784, 10}, 8}, {}, Scope::Step, 0), std::invalid_argument,
                    "0 steps");
  EXPECT_THROW_WITH(make_plan({{784, 10}, 8}, {}, Scope::Evaluate, 2), std::invalid_argument,
                    "an evaluation's 1");
}

}  // namespace
