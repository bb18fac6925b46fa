// The step plan (engine/step_plan.h): every unit's output covered once, no two units that touch
// the same data left unordered by the counters, and no grid that fits on the device stuck.
#include "engine/step_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "expect_error.h"

namespace {

using engine::step_plan::Kind;
using engine::step_plan::make_plan;
using engine::step_plan::Part;
using engine::step_plan::Plan;
using engine::step_plan::StepShape;
using engine::step_plan::Unit;
using engine::step_plan::UnitSizes;

// A rectangle of one of the step's matrices: X (the batch), labels, Y_l, G_l (the gradient at
// Y_l), W_l, b_l, dW_l, db_l; rows [r0, r1), columns [c0, c1).
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
Access access(const Unit& u, const StepShape& s) {
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
    case Kind::Loss:
      a.reads = {{m("Y", layers - 1), u.row0, r1, 0, d[layers]}, {"labels", u.row0, r1, 0, 1}};
      a.writes = {{m("G", layers - 1), u.row0, r1, 0, d[layers]}};
      return a;
    case Kind::BiasGrad:
      a.reads = {{m("G", l), 0, s.batch, u.row0, r1}};
      a.writes = {{m("db", l), u.row0, r1, 0, 1}};
      return a;
    case Kind::Update:
      a.reads = {{m("dW", l), u.row0, r1, 0, d[l]}, {m("db", l), u.row0, r1, 0, 1}};
      a.writes = {{m("W", l), u.row0, r1, 0, d[l]}, {m("b", l), u.row0, r1, 0, 1}};
      return a;
    case Kind::Gather:
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
std::string first_race(const Plan& plan, const StepShape& shape) {
  const auto hb = happens_before(plan);
  std::vector<Access> acc;
  for (const Unit& u : plan.units) acc.push_back(access(u, shape));
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

// How many units write each element of each matrix: every output exactly once.
void expect_each_output_written_once(const Plan& plan, const StepShape& shape) {
  std::map<std::string, std::map<std::pair<int, int>, int>> written;
  for (const Unit& u : plan.units)
    for (const Region& w : access(u, shape).writes)
      for (int r = w.r0; r < w.r1; ++r)
        for (int c = w.c0; c < w.c1; ++c) ++written[w.matrix][{r, c}];
  const int layers = static_cast<int>(shape.widths.size()) - 1;
  const auto& d = shape.widths;
  std::map<std::string, std::pair<int, int>> sizes = {{"X", {shape.batch, d[0]}},
                                                      {"labels", {shape.batch, 1}}};
  for (int l = 0; l < layers; ++l) {
    const std::string n = std::to_string(l);
    sizes["Y" + n] = {shape.batch, d[l + 1]};
    sizes["G" + n] = {shape.batch, d[l + 1]};
    sizes["W" + n] = sizes["dW" + n] = {d[l + 1], d[l]};
    sizes["b" + n] = sizes["db" + n] = {d[l + 1], 1};
  }
  for (const auto& [matrix, size] : sizes) {
    const auto& cells = written[matrix];
    EXPECT_EQ(static_cast<int64_t>(cells.size()), int64_t(size.first) * size.second) << matrix;
    for (const auto& [cell, count] : cells) {
      ASSERT_EQ(count, 1) << matrix << " (" << cell.first << ", " << cell.second << ")";
      ASSERT_LT(cell.first, size.first) << matrix;
      ASSERT_LT(cell.second, size.second) << matrix;
    }
  }
}

// Runs the plan on `grid` simulated blocks, block b taking units b, b + grid, … in turn, one
// runnable block at random at each move, a unit starting only once its waits are met. Returns
// false when no block can move before every unit is done (a deadlock).
bool runs_to_the_end(const Plan& plan, int grid, std::mt19937& rng) {
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

TEST(StepPlan, EveryOutputIsWrittenOnceAndTheListIsASchedule) {
  for (const Case& c : cases()) {
    const Plan plan = make_plan(c.shape, c.sizes);
    EXPECT_EQ(engine::step_plan::check_plan(plan), "");
    expect_each_output_written_once(plan, c.shape);
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

TEST(StepPlan, UnitsThatShareDataAreOrderedByTheCounters) {
  for (const Case& c : cases()) {
    const Plan plan = make_plan(c.shape, c.sizes);
    EXPECT_EQ(first_race(plan, c.shape), "") << c.shape.widths.size() - 1 << " layers";
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
  ASSERT_GT(update->wait_count, 0);
  update->wait_count -= 1;  // its last wait: every InputGrad 1 tile, the reads of W_1
  const std::string race = first_race(plan, c.shape);
  EXPECT_NE(race.find("InputGrad 1"), std::string::npos) << race;
  EXPECT_NE(race.find("Update 1"), std::string::npos) << race;
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
  for (const Case& c : cases()) {
    const Plan plan = make_plan(c.shape, c.sizes);
    for (int grid : {1, 2, 3, 7, 64, 132, static_cast<int>(plan.units.size()) + 3})
      for (int trial = 0; trial < 3; ++trial)
        EXPECT_TRUE(runs_to_the_end(plan, grid, rng)) << "grid " << grid;
  }
}

TEST(StepPlan, ShapesThatDoNotFitAreRefused) {
  EXPECT_THROW_WITH(make_plan({{784}, 8}, {}), std::invalid_argument, "at least two widths");
  EXPECT_THROW_WITH(make_plan({{784, 0, 10}, 8}, {}), std::invalid_argument, "width 1 is 0");
  EXPECT_THROW_WITH(make_plan({{784, 10}, 0}, {}), std::invalid_argument, "the batch is 0");
  EXPECT_THROW_WITH(make_plan({{784, 10}, 8}, {128, 128, 128, 128, 0}), std::invalid_argument,
                    "every unit size and split count must be");
  EXPECT_THROW_WITH(make_plan({{784, 10}, 8}, {0, 128, 128, 128}), std::invalid_argument,
                    "every unit size and split count must be");
}

}  // namespace
