#include "engine/step_plan.h"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

namespace engine::step_plan {

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::Forward:
      return "Forward";
    case Kind::Loss:
      return "Loss";
    case Kind::Metrics:
      return "Metrics";
    case Kind::InputGrad:
      return "InputGrad";
    case Kind::WeightGrad:
      return "WeightGrad";
    case Kind::BiasGrad:
      return "BiasGrad";
    case Kind::Update:
      return "Update";
    case Kind::Gather:
      return "Gather";
  }
  return "?";
}

namespace {

int blocks(int extent, int size) { return (extent + size - 1) / size; }

// Counters in families: one per block of rows (or of columns) of a matrix, each reaching its
// total when every unit writing into that block is done.
struct Family {
  int first = 0, count = 0, block = 1;
};

class Builder {
 public:
  Builder(Plan& plan, int k_granule) : plan_(plan), granule_(k_granule) {}
  void start_step(int step) { step_ = step; }

  Family family(const std::string& name, int extent, int block) {
    Family f{static_cast<int>(plan_.counters.size()), blocks(extent, block), block};
    for (int b = 0; b < f.count; ++b) {
      plan_.counters.push_back(name + " " + std::to_string(b));
      plan_.counter_totals.push_back(0);
    }
    return f;
  }
  int counter(const std::string& name) { return family(name, 1, 1).first; }

  void unit(Kind kind, int layer, int row0, int rows, int col0, int cols, Part part = Part::Whole) {
    Unit u;
    u.kind = kind;
    u.part = part;
    u.layer = layer;
    u.step = step_;
    u.row0 = row0, u.rows = rows, u.col0 = col0, u.cols = cols;
    u.first_wait = static_cast<int>(plan_.waits.size());
    u.first_signal = static_cast<int>(plan_.signals.size());
    plan_.units.push_back(u);
  }
  // The current unit waits until every unit that signals the counter is done: its target is the
  // count of signals so far, which is all of them, since every signaller is listed before the
  // first unit that waits (the list is a schedule; check_plan checks it).
  void wait(int counter) {
    plan_.waits.push_back({counter, plan_.counter_totals[counter]});
    ++plan_.units.back().wait_count;
  }
  // The same for every block of f meeting [lo, hi).
  void wait(const Family& f, int lo, int hi) {
    for (int b = lo / f.block; b <= (hi - 1) / f.block; ++b) wait(f.first + b);
  }
  // A GEMM's output tile over K = k_extent in `splits` slices (at most K): one Whole unit, or the
  // Slice units, then their Sum. Each Whole or Slice unit waits as waits() says (a slice reads
  // what the whole tile would, its K range aside); the Whole or Sum unit signals as signals()
  // says, so that what waits for the tile waits for its slices too.
  template <class Waits, class Signals>
  void gemm_tile(Kind kind, int layer, int row0, int rows, int col0, int cols, int k_extent,
                 int splits, Waits waits, Signals signals) {
    const int granule = std::min(granule_, k_extent);
    const int slice_k = blocks(blocks(k_extent, std::min(splits, k_extent)), granule) * granule;
    const int slices = blocks(k_extent, slice_k);
    if (slices == 1) {
      unit(kind, layer, row0, rows, col0, cols);
      plan_.units.back().k_len = k_extent;
      waits();
      signals();
      return;
    }
    const int partial =
        counter(std::string(kind_name(kind)) + " " + std::to_string(layer) + " slices of (" +
                std::to_string(row0) + ", " + std::to_string(col0) + ")");
    for (int s = 0; s < slices; ++s) {
      unit(kind, layer, row0, rows, col0, cols, Part::Slice);
      Unit& u = plan_.units.back();
      u.k0 = s * slice_k;
      u.k_len = std::min(slice_k, k_extent - u.k0);
      u.slice = s;
      u.slices = slices;
      waits();
      signal(partial);
    }
    unit(kind, layer, row0, rows, col0, cols, Part::Sum);
    plan_.units.back().k_len = k_extent;
    plan_.units.back().slices = slices;
    wait(partial);
    signals();
  }

  // The current unit signals block `index` of f when it is done.
  void signal(const Family& f, int index) { signal(f.first + index); }
  void signal(int counter) {
    plan_.signals.push_back(counter);
    ++plan_.counter_totals[counter];
    ++plan_.units.back().signal_count;
  }

 private:
  Plan& plan_;
  int granule_ = 1;
  int step_ = 0;
};

// The counters of one step that the next step's units wait on.
struct StepCounters {
  Family update_rows_0;         // Update 0's slices of W_0's rows
  std::vector<int> update_all;  // per layer l ≥ 1 (index l): every Update unit of the layer
  int metrics = 0;              // the Metrics unit (it counts the step)
  Family gather_rows;           // the Gather units, by batch rows
};

// Appends one step (or evaluation) to the plan, its counters' names prefixed with `prefix`. With
// `before` (the step before, in a plan of several), its Forward tiles also wait for what the step
// before must finish first: every read of the activations they overwrite (the next layer's
// update, which follows them all, or for the logits the step before's metrics) and, in layer 0,
// the update of the weights they read and the gather of their rows of the batch. In layer l > 0
// the update of W_l is already behind them: they wait for layer l − 1's tiles, which waited for
// all of it. Every other hazard between steps follows from these through the step's own counters
// (the race check of tests/engine/step_plan_test.cpp checks that).
StepCounters add_step(Builder& b, const StepShape& shape, const UnitSizes& sizes, Scope scope,
                      const std::string& prefix, const StepCounters* before) {
  const int layers = static_cast<int>(shape.widths.size()) - 1;
  const int batch = shape.batch, tm = sizes.tile_m, tn = sizes.tile_n;
  const auto& d = shape.widths;
  auto name = [&](const char* what, int l) {
    return prefix + std::string(what) + " " + std::to_string(l);
  };
  StepCounters made;

  // Y_l's row blocks (read by the next layer and the loss) and column blocks (W_l's rows, which
  // the update of those rows must not overwrite before they are read).
  std::vector<Family> y_rows(layers), y_cols(layers);
  for (int l = 0; l < layers; ++l) {
    y_rows[l] = b.family(name("Forward", l) + " rows", batch, tm);
    y_cols[l] = b.family(name("Forward", l) + " cols", d[l + 1], tn);
    for (int i = 0; i < batch; i += tm)
      for (int j = 0; j < d[l + 1]; j += tn) {
        const int rows = std::min(tm, batch - i), cols = std::min(tn, d[l + 1] - j);
        b.gemm_tile(
            Kind::Forward, l, i, rows, j, cols, d[l], sizes.forward_splits,
            [&] {
              if (l > 0) b.wait(y_rows[l - 1], i, i + rows);
              if (before == nullptr) return;
              b.wait(l + 1 < layers ? before->update_all[l + 1] : before->metrics);
              if (l > 0) return;
              b.wait(before->update_rows_0, j, j + cols);
              b.wait(before->gather_rows, i, i + rows);
            },
            [&] {
              b.signal(y_rows[l], i / tm);
              b.signal(y_cols[l], j / tn);
            });
      }
  }

  // G_l, the gradient at Y_l (the ReLU mask applied), by row and by column blocks; the last
  // layer's is the loss's, in blocks of loss_rows rows (all its columns). An evaluation's Loss
  // units write no gradient: only their metrics, which Metrics waits for by the same rows.
  std::vector<Family> g_rows(layers), g_cols(layers);
  const int out = d[layers];
  g_rows[layers - 1] = b.family(prefix + "Loss rows", batch, sizes.loss_rows);
  if (scope == Scope::Step) g_cols[layers - 1] = b.family(prefix + "Loss cols", out, out);
  for (int i = 0; i < batch; i += sizes.loss_rows) {
    const int rows = std::min(sizes.loss_rows, batch - i);
    b.unit(Kind::Loss, layers - 1, i, rows, 0, out);
    b.wait(y_rows[layers - 1], i, i + rows);
    b.signal(g_rows[layers - 1], i / sizes.loss_rows);
    if (scope == Scope::Step) b.signal(g_cols[layers - 1], 0);
  }
  // The metrics, and in a training step the step count the updates' schedule reads.
  made.metrics = b.counter(prefix + "Metrics");
  b.unit(Kind::Metrics, layers - 1, 0, blocks(batch, sizes.loss_rows), 0, 1);
  b.wait(g_rows[layers - 1], 0, batch);
  b.signal(made.metrics);
  if (scope == Scope::Evaluate) return made;

  made.update_all.assign(layers, -1);
  Family dw0_all{};  // every WeightGrad unit of layer 0: the last reads of the batch
  for (int l = layers - 1; l >= 0; --l) {
    // InputGrad l: G_{l−1} = (G_l · W_l) ⊙ [Y_{l−1} > 0], batch × d_l.
    Family reads_all{};  // every read of W_l by InputGrad l
    if (l > 0) {
      g_rows[l - 1] = b.family(name("InputGrad", l) + " rows", batch, tm);
      g_cols[l - 1] = b.family(name("InputGrad", l) + " cols", d[l], tn);
      reads_all = b.family(name("InputGrad", l) + " all", 1, 1);
      for (int i = 0; i < batch; i += tm)
        for (int j = 0; j < d[l]; j += tn)
          b.gemm_tile(
              Kind::InputGrad, l, i, std::min(tm, batch - i), j, std::min(tn, d[l] - j), d[l + 1],
              sizes.input_grad_splits, [&] { b.wait(g_rows[l], i, std::min(batch, i + tm)); },
              [&] {
                b.signal(g_rows[l - 1], i / tm);
                b.signal(g_cols[l - 1], j / tn);
                b.signal(reads_all, 0);
              });
    }
    // WeightGrad l: dW_l = G_lᵀ · X_l, d_{l+1} × d_l, and BiasGrad l, by the same row blocks.
    const Family dw_rows = b.family(name("WeightGrad", l) + " rows", d[l + 1], tm);
    if (l == 0) dw0_all = b.family(prefix + "WeightGrad 0 all", 1, 1);
    for (int p = 0; p < d[l + 1]; p += tm)
      for (int q = 0; q < d[l]; q += tn) {
        const int rows = std::min(tm, d[l + 1] - p);
        b.gemm_tile(
            Kind::WeightGrad, l, p, rows, q, std::min(tn, d[l] - q), batch,
            sizes.weight_grad_splits, [&] { b.wait(g_cols[l], p, p + rows); },
            [&] {
              b.signal(dw_rows, p / tm);
              if (l == 0) b.signal(dw0_all, 0);
            });
      }
    const Family db_rows = b.family(name("BiasGrad", l) + " rows", d[l + 1], tm);
    for (int p = 0; p < d[l + 1]; p += tm) {
      const int rows = std::min(tm, d[l + 1] - p);
      b.unit(Kind::BiasGrad, l, p, rows, 0, 1);
      b.wait(g_cols[l], p, p + rows);
      b.signal(db_rows, p / tm);
    }
    // Update l, rows [p, p + tm) of W_l and b_l: once their gradients are whole, nothing will
    // read them again in this step, and the step is counted.
    // The next step waits for them by rows in layer 0, and all at once in the others.
    if (l == 0) made.update_rows_0 = b.family(prefix + "Update 0 rows", d[1], tm);
    if (l > 0) made.update_all[l] = b.counter(name("Update", l) + " all");
    for (int p = 0; p < d[l + 1]; p += tm) {
      const int rows = std::min(tm, d[l + 1] - p);
      b.unit(Kind::Update, l, p, rows, 0, d[l]);
      b.wait(dw_rows, p, p + rows);
      b.wait(db_rows, p, p + rows);
      b.wait(y_cols[l], p, p + rows);
      if (l > 0) b.wait(reads_all.first);
      b.wait(made.metrics);
      if (l == 0) b.signal(made.update_rows_0, p / tm);
      if (l > 0) b.signal(made.update_all[l]);
    }
  }

  // The next batch's gather overwrites the batch and its labels; the step count, once Metrics has
  // counted this step, names the batch.
  made.gather_rows = b.family(prefix + "Gather rows", batch, sizes.gather_rows);
  for (int i = 0; i < batch; i += sizes.gather_rows) {
    b.unit(Kind::Gather, 0, i, std::min(sizes.gather_rows, batch - i), 0, d[0]);
    b.wait(dw0_all.first);
    b.wait(made.metrics);
    b.signal(made.gather_rows, i / sizes.gather_rows);
  }
  return made;
}

}  // namespace

Plan make_plan(const StepShape& shape, const UnitSizes& sizes, Scope scope, int steps) {
  const int layers = static_cast<int>(shape.widths.size()) - 1;
  if (layers < 1)
    throw std::invalid_argument("step plan: a model needs at least two widths (input, output)");
  for (size_t i = 0; i < shape.widths.size(); ++i)
    if (shape.widths[i] < 1)
      throw std::invalid_argument("step plan: width " + std::to_string(i) + " is " +
                                  std::to_string(shape.widths[i]) + "; widths must be ≥ 1");
  if (shape.batch < 1)
    throw std::invalid_argument("step plan: the batch is " + std::to_string(shape.batch) +
                                "; it must be ≥ 1");
  if (sizes.tile_m < 1 || sizes.tile_n < 1 || sizes.loss_rows < 1 || sizes.gather_rows < 1 ||
      sizes.forward_splits < 1 || sizes.input_grad_splits < 1 || sizes.weight_grad_splits < 1 ||
      sizes.k_granule < 1)
    throw std::invalid_argument("step plan: every unit size and split count must be ≥ 1");
  if (steps < 1 || (scope == Scope::Evaluate && steps != 1))
    throw std::invalid_argument("step plan: " + std::to_string(steps) + " steps; a training plan " +
                                "covers 1 or more, an evaluation's 1");

  Plan plan;
  Builder b(plan, sizes.k_granule);
  StepCounters before;
  for (int s = 0; s < steps; ++s) {
    const std::string prefix = steps > 1 ? "step " + std::to_string(s) + ": " : "";
    b.start_step(s);
    before = add_step(b, shape, sizes, scope, prefix, s > 0 ? &before : nullptr);
  }
  return plan;
}

namespace {

bool is_gemm_tile(const Unit& u) {
  return u.kind == Kind::Forward || u.kind == Kind::InputGrad || u.kind == Kind::WeightGrad;
}

int waves(int n, int slots) { return (n + slots - 1) / slots; }

// Groups' ends by the cost model, taken in list order: a group starts once its cluster is done
// with the groups before it and its waits are met (a wait for the n-th signal of a counter, met a
// handoff after the n-th soonest end among the groups before that signal it); its signals come at
// its end, when the slowest of its units is done.
class Timing {
 public:
  Timing(const Plan& plan, int size, int clusters, const UnitCost& cost)
      : plan_(plan),
        size_(size),
        cost_(cost),
        free_(clusters, 0.0),
        signals_(plan.counters.size()) {}

  double ready_us(const Group& g) const {
    double ready = 0.0;
    for (int u = g.first; u < g.first + g.count; ++u) {
      const Unit& unit = plan_.units[u];
      for (int w = unit.first_wait; w < unit.first_wait + unit.wait_count; ++w) {
        const Wait& wait = plan_.waits[w];
        const std::vector<double>& ends = signals_[wait.counter];
        if (wait.target > 0 && wait.target <= static_cast<int>(ends.size()))
          ready = std::max(ready, ends[wait.target - 1] + cost_.handoff_us);
      }
    }
    return ready;
  }
  double free_us(int cluster) const { return free_[cluster]; }
  // Runs g on `cluster` from its start; returns its end.
  double run(const Group& g, int cluster) {
    double longest = 0.0;
    for (int u = g.first; u < g.first + g.count; ++u)
      longest = std::max(longest, unit_us(plan_.units[u], g.per_block ? 1 : size_, cost_));
    const double end = std::max(free_[cluster], ready_us(g)) + longest;
    free_[cluster] = end;
    last_ = std::max(last_, end);
    for (int u = g.first; u < g.first + g.count; ++u) {
      const Unit& unit = plan_.units[u];
      for (int s = unit.first_signal; s < unit.first_signal + unit.signal_count; ++s) {
        std::vector<double>& ends = signals_[plan_.signals[s]];
        ends.insert(std::upper_bound(ends.begin(), ends.end(), end), end);
      }
    }
    return end;
  }
  double last_us() const { return last_; }

 private:
  const Plan& plan_;
  int size_;
  const UnitCost& cost_;
  std::vector<double> free_;                  // each cluster's end of its last group
  std::vector<std::vector<double>> signals_;  // each counter's signals' times, sorted
  double last_ = 0.0;
};

}  // namespace

double unit_us(const Unit& u, int blocks, const UnitCost& cost) {
  if (is_gemm_tile(u) && u.part != Part::Sum) {
    const double per_k_tile = u.kind == Kind::Forward     ? cost.forward_us
                              : u.kind == Kind::InputGrad ? cost.input_grad_us
                                                          : cost.weight_grad_us;
    const int k_tiles = (u.k_len + cost.k_tile - 1) / cost.k_tile;
    return cost.fixed_us + (blocks > 1 ? cost.cluster_sum_us : 0.0) +
           waves(k_tiles, blocks) * per_k_tile;
  }
  if (u.kind == Kind::Update)
    return cost.other_us + static_cast<double>(u.rows) * (u.cols + 1) *
                               cost.update_ns_per_parameter * 1e-3 / blocks;
  return cost.other_us;
}

std::vector<Group> group_units(const Plan& plan, int size, int clusters, const UnitCost& cost) {
  const auto is_tile = [](const Unit& u) { return is_gemm_tile(u) && u.part == Part::Whole; };
  const auto same_gemm = [](const Unit& a, const Unit& b) {
    return a.kind == b.kind && a.layer == b.layer && a.step == b.step;
  };
  // Whether `tiles` tiles like u run sooner a tile a block than a tile a cluster.
  const auto faster_per_block = [&](const Unit& u, int tiles) {
    return waves(tiles, clusters * size) * unit_us(u, 1, cost) <
           waves(tiles, clusters) * unit_us(u, size, cost);
  };
  std::vector<Group> groups;
  const int units = static_cast<int>(plan.units.size());
  for (int u = 0; u < units;) {
    int end = u + 1;  // the run of tiles of u's GEMM from u
    if (is_tile(plan.units[u]))
      while (end < units && is_tile(plan.units[end]) && same_gemm(plan.units[u], plan.units[end]))
        ++end;
    const bool per_block =
        size > 1 && end - u > clusters && faster_per_block(plan.units[u], end - u);
    for (const int step = per_block ? size : 1; u < end; u += std::min(step, end - u))
      groups.push_back({u, std::min(step, end - u), per_block});
  }
  return groups;
}

Schedule schedule_groups(const Plan& plan, const std::vector<Group>& groups, int size, int clusters,
                         const UnitCost& cost, Assignment assignment) {
  if (clusters < 1) throw std::invalid_argument("step plan: a schedule needs a cluster");
  Timing timing(plan, size, clusters, cost);
  std::vector<std::vector<Group>> on(clusters);
  for (size_t g = 0; g < groups.size(); ++g) {
    int best = static_cast<int>(g % clusters);
    if (assignment == Assignment::Soonest) {
      const double ready = timing.ready_us(groups[g]);
      best = 0;
      for (int c = 1; c < clusters; ++c)
        if (std::max(timing.free_us(c), ready) < std::max(timing.free_us(best), ready)) best = c;
    }
    timing.run(groups[g], best);
    on[best].push_back(groups[g]);
  }
  Schedule schedule;
  for (const std::vector<Group>& mine : on) {
    schedule.first.push_back(static_cast<int>(schedule.groups.size()));
    schedule.groups.insert(schedule.groups.end(), mine.begin(), mine.end());
  }
  schedule.first.push_back(static_cast<int>(schedule.groups.size()));
  return schedule;
}

double estimated_us(const Plan& plan, const Schedule& schedule, int size, const UnitCost& cost) {
  const int clusters = static_cast<int>(schedule.first.size()) - 1;
  // The groups in list order (their first units'), each with its cluster.
  std::vector<std::pair<int, int>> order;  // (index in schedule.groups, cluster)
  for (int c = 0; c < clusters; ++c)
    for (int g = schedule.first[c]; g < schedule.first[c + 1]; ++g) order.push_back({g, c});
  std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return schedule.groups[a.first].first < schedule.groups[b.first].first;
  });
  Timing timing(plan, size, std::max(clusters, 1), cost);
  for (const auto& [g, c] : order) timing.run(schedule.groups[g], c);
  return timing.last_us();
}

std::string describe(const Plan& plan, const WaitTimeout& timeout) {
  const int units = static_cast<int>(plan.units.size());
  if (timeout.unit < 0 || timeout.unit >= units)
    return "step kernel: a wait timed out in unit " + std::to_string(timeout.unit) +
           ", which the plan of " + std::to_string(units) + " units does not have";
  const Unit& u = plan.units[timeout.unit];
  if (timeout.wait < u.first_wait || timeout.wait >= u.first_wait + u.wait_count)
    return "step kernel: unit " + std::to_string(timeout.unit) + " reported its wait " +
           std::to_string(timeout.wait) + ", which is not one of its " +
           std::to_string(u.wait_count) + " waits";
  const Wait& w = plan.waits[timeout.wait];
  return "step kernel: unit " + std::to_string(timeout.unit) + " (" + kind_name(u.kind) + " " +
         std::to_string(u.layer) + " of step " + std::to_string(u.step) + ", rows " +
         std::to_string(u.row0) + ".." + std::to_string(u.row0 + u.rows - 1) + ", cols " +
         std::to_string(u.col0) + ".." + std::to_string(u.col0 + u.cols - 1) +
         ") gave up waiting for '" + plan.counters[w.counter] + "' to reach " +
         std::to_string(w.target) + "; it stayed at " + std::to_string(timeout.reached);
}

std::string check_plan(const Plan& plan) {
  const int counters = static_cast<int>(plan.counters.size());
  std::vector<int> signalled(counters, 0);  // signals from the units before the current one
  for (size_t u = 0; u < plan.units.size(); ++u) {
    const Unit& unit = plan.units[u];
    const std::string where = "unit " + std::to_string(u) + " (" + kind_name(unit.kind) + " " +
                              std::to_string(unit.layer) + ")";
    for (int w = unit.first_wait; w < unit.first_wait + unit.wait_count; ++w) {
      const Wait& wait = plan.waits[w];
      if (wait.counter < 0 || wait.counter >= counters)
        return where + " waits on counter " + std::to_string(wait.counter) + ", which is not one";
      if (wait.target > plan.counter_totals[wait.counter])
        return where + " waits for " + std::to_string(wait.target) + " on '" +
               plan.counters[wait.counter] + "', which is signalled only " +
               std::to_string(plan.counter_totals[wait.counter]) + " times";
      if (wait.target > signalled[wait.counter])
        return where + " waits for " + std::to_string(wait.target) + " on '" +
               plan.counters[wait.counter] + "', but only " +
               std::to_string(signalled[wait.counter]) +
               " earlier units signal it: the list is not a schedule";
    }
    for (int s = unit.first_signal; s < unit.first_signal + unit.signal_count; ++s)
      ++signalled[plan.signals[s]];
  }
  return "";
}

}  // namespace engine::step_plan
