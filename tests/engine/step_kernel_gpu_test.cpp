// The step kernel's evaluation (engine/step_kernel.h) on the GPU, in each variant it serves:
//   - its outputs against a double-precision forward pass on the host, within the variant's
//     tolerance carried through the layers (below), on fresh random data, every layer's buffer
//     poisoned with NaN by a launch before;
//   - its metrics against the host's loss of those same outputs (the correct count exactly);
//   - whole tiles, and K in 3 slices summed by units of their own; each unit on one block, and on
//     clusters of 4 and of 3 blocks (a tile's K shared, some shares empty at short K; a Sum's and a
//     Loss unit's rows shared);
//   - the same bits on a grid of 1, 3 and every resident block, with K split, single and in
//     clusters of 2, the groups on the soonest cluster and round robin;
//   - by default, clusters as large as keep the widest layer's tiles in one wave;
//   - each unit's phases recorded in order (wait, start, a tile's K loop and store, end);
//   - Trainer::evaluate through it (clusters of the default size) against a trainer of the same
//     parameters launch by launch, with a partial last batch;
//   - a wait past its time limit reported by check(), naming the unit, and the next launch clean,
//     single and in clusters (where every block of a cluster must leave together);
//   - and the networks and variants it does not serve, said why.
// Shapes: the default model, odd widths (misaligned rows: the producer's own copies), 5 layers,
// batches that leave partial tiles, and a Linear without a ReLU between two others.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "engine/step_plan.h"
#include "expect_error.h"
#include "gpu_test.h"
#include "random_data.h"

namespace {

using engine::Context;
using engine::Device;
using engine::LabelTensor;
using engine::Metrics;
using engine::MetricTotals;
using engine::StepKernel;
using engine::Tensor;

const std::vector<std::string> kVariants = {"tf32_fast", "tf32x3_fast", "auto"};

struct Net {
  std::vector<int> widths;
  std::vector<bool> relu;  // after each Linear
  engine::Sequential seq;
  std::vector<engine::Linear*> linears;

  Net(Context& ctx, std::vector<int> w, std::vector<bool> r)
      : widths(std::move(w)), relu(std::move(r)) {
    for (size_t l = 0; l + 1 < widths.size(); ++l) {
      linears.push_back(&seq.add<engine::Linear>(ctx, widths[l], widths[l + 1]));
      if (relu[l]) seq.add<engine::ReLU>();
    }
  }
};

// A hidden ReLU after every Linear but the last.
std::vector<bool> mlp_relus(size_t widths) {
  std::vector<bool> r(widths - 1, true);
  r.back() = false;
  return r;
}

// The forward pass in double on the host, and the same network on |W|, |b| and |x| (every
// activation's magnitude bound, the ReLUs as the real pass has them): an output may be off by
// layers · tolerance · that bound, as each GEMM adds at most tolerance·Σ|terms| and passes the
// error before it on through |W| (and a ReLU, which never widens a difference).
struct Reference {
  std::vector<double> y, bound;
};

Reference reference(Context& ctx, Net& net, const std::vector<float>& x, int rows) {
  std::vector<double> act(x.begin(), x.end()), mag(act.size());
  std::transform(act.begin(), act.end(), mag.begin(), [](double v) { return std::fabs(v); });
  for (size_t l = 0; l < net.linears.size(); ++l) {
    const int in = net.widths[l], out = net.widths[l + 1];
    const std::vector<float> w = net.linears[l]->weight().value.download(ctx.stream());
    const std::vector<float> b = net.linears[l]->bias().value.download(ctx.stream());
    std::vector<double> next(static_cast<size_t>(rows) * out), next_mag(next.size());
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < out; ++j) {
        double v = b[j], m = std::fabs(b[j]);
        for (int k = 0; k < in; ++k) {
          v += act[static_cast<size_t>(i) * in + k] * w[static_cast<size_t>(j) * in + k];
          m += mag[static_cast<size_t>(i) * in + k] * std::fabs(w[static_cast<size_t>(j) * in + k]);
        }
        next[static_cast<size_t>(i) * out + j] = net.relu[l] ? std::max(v, 0.0) : v;
        next_mag[static_cast<size_t>(i) * out + j] = m;
      }
    act.swap(next);
    mag.swap(next_mag);
  }
  return {act, mag};
}

double tolerance_of(const std::string& variant) {
  return gemm::tolerance(gemm::find_variant(variant).precision);
}

// Softmax cross-entropy of float logits in double, and the first arg-max's matches.
MetricTotals host_xent(const std::vector<float>& logits, const std::vector<int32_t>& labels,
                       int rows, int classes) {
  MetricTotals t;
  for (int i = 0; i < rows; ++i) {
    const float* z = logits.data() + static_cast<size_t>(i) * classes;
    const int best = static_cast<int>(std::max_element(z, z + classes) - z);
    double sum = 0.0;
    for (int j = 0; j < classes; ++j) sum += std::exp(static_cast<double>(z[j]) - z[best]);
    t.loss_sum += std::log(sum) - (static_cast<double>(z[labels[i]]) - z[best]);
    t.correct += best == labels[i] ? 1 : 0;
  }
  t.seen = rows;
  return t;
}

// rows × in inputs in (−1, 1) and labels in [0, classes), on the GPU, and a network of these
// widths prepared for batches of `rows`.
struct Batch {
  Net net;
  Tensor x;
  LabelTensor labels;
  Batch(Context& ctx, const std::vector<int>& widths, int rows, uint64_t seed)
      : net(ctx, widths, mlp_relus(widths.size())) {
    net.seq.prepare(ctx, rows);
    std::mt19937_64 rng(seed);
    x = Tensor::from_host(Device::CUDA, rows, widths.front(),
                          random_values(rng, static_cast<size_t>(rows) * widths.front()));
    labels = LabelTensor(Device::CUDA, random_labels(rng, rows, widths.back()));
  }
};

// The default model at batch 256 in tf32_fast (16 tiles of 128×128 in each hidden layer), a
// batch for it, and its step kernel.
struct DefaultModel {
  Context ctx{Device::CUDA, "tf32_fast", 1};
  Batch batch{ctx, {784, 1024, 1024, 10}, 256, 2};
  StepKernel kernel{ctx, batch.net.seq, 256, true};

  // The batch evaluated through the kernel, checked: the rows its metrics saw.
  int64_t evaluated_rows() {
    Metrics metrics(ctx);
    kernel.evaluate(ctx, batch.x, batch.labels.data(), metrics);
    kernel.check(ctx);
    return metrics.read(ctx).seen;
  }
};
// Skips where tf32_fast has no GPU or no wgmma; else declares `name`, a DefaultModel.
#define DEFAULT_MODEL_OR_SKIP(name)                                                \
  GPU_TEST_OR_SKIP();                                                              \
  if (const char* why = gemm::unavailable_reason(gemm::find_variant("tf32_fast"))) \
    GTEST_SKIP() << why;                                                           \
  DefaultModel name

struct Case {
  std::vector<int> widths;
  std::vector<bool> relu;
  int max_batch, batch;
};

std::vector<Case> cases() {
  return {
      {{784, 1024, 1024, 10}, mlp_relus(4), 256, 256},  // the default model, a full batch
      {{784, 1024, 1024, 10}, mlp_relus(4), 256, 77},   // a partial batch: one partial tile row
      {{37, 129, 65, 7}, mlp_relus(4), 100, 100},       // odd widths: misaligned rows
      {{64, 200, 300, 130, 50, 3}, mlp_relus(6), 300, 300},  // 5 layers, 3 row blocks
      {{33, 70, 41, 300}, {true, false, false}, 40, 40},     // Linear after Linear; 300 classes
  };
}

std::string case_name(const std::string& variant, const Case& c) {
  std::string s = variant + " ";
  for (size_t i = 0; i < c.widths.size(); ++i) s += (i ? "-" : "") + std::to_string(c.widths[i]);
  return s + " at " + std::to_string(c.batch) + " of " + std::to_string(c.max_batch);
}

// One test per variant (below), so that GoogleTest's shards split them under the sanitizers.
void expect_evaluates_as_the_host(const std::string& variant) {
  if (const char* why = gemm::unavailable_reason(gemm::find_variant(variant))) GTEST_SKIP() << why;
  for (const Case& c : cases()) {
    SCOPED_TRACE(case_name(variant, c));
    Context ctx(Device::CUDA, variant, 7);
    Net net(ctx, c.widths, c.relu);
    net.seq.prepare(ctx, c.max_batch);
    std::mt19937_64 rng(11);
    const int in = c.widths.front(), out = c.widths.back();
    const std::vector<float> x = random_values(rng, static_cast<size_t>(c.batch) * in);
    const std::vector<int32_t> labels = random_labels(rng, c.batch, out);
    const Tensor xt = Tensor::from_host(Device::CUDA, c.batch, in, x);
    const LabelTensor lt(Device::CUDA, labels);
    StepKernel kernel(ctx, net.seq, c.max_batch, true);
    const Reference ref = reference(ctx, net, x, c.batch);
    const double tol = tolerance_of(variant) * static_cast<double>(c.widths.size() - 1);
    // Whole tiles and K in 3 slices (uneven: 784 = 288 + 288 + 208), on single blocks and in
    // clusters: of 4 (784's 25 K tiles as 7, 7, 7 and 4; 37's 2 as 1, 1 and two empty shares)
    // and, with the slices, of 3.
    for (const auto& [splits, cluster] :
         std::vector<std::pair<int, int>>{{1, 1}, {3, 1}, {1, 4}, {3, 3}}) {
      SCOPED_TRACE("forward splits " + std::to_string(splits) + ", clusters of " +
                   std::to_string(cluster));
      kernel.set_forward_splits(ctx, splits);
      kernel.set_cluster_size(ctx, cluster);
      {  // NaN inputs leave every layer's output NaN: what the next launch misses shows
        const Tensor poison = Tensor::from_host(
            Device::CUDA, c.max_batch, in,
            std::vector<float>(static_cast<size_t>(c.max_batch) * in, std::nanf("")));
        const LabelTensor zeros(Device::CUDA, std::vector<int32_t>(c.max_batch, 0));
        Metrics thrown_away(ctx);
        kernel.evaluate(ctx, poison, zeros.data(), thrown_away);
      }
      Metrics metrics(ctx);
      kernel.evaluate(ctx, xt, lt.data(), metrics);
      kernel.check(ctx);
      const MetricTotals got = metrics.read(ctx);
      const std::vector<float> y = kernel.outputs().download(ctx.stream());
      ASSERT_EQ(y.size(), static_cast<size_t>(c.batch) * out);
      int bad = 0;
      for (size_t i = 0; i < y.size(); ++i)
        if (!(std::fabs(y[i] - ref.y[i]) <= tol * ref.bound[i] + 1e-6) && bad++ < 5)
          ADD_FAILURE() << "output " << i << ": " << y[i] << ", expected " << ref.y[i] << " within "
                        << tol * ref.bound[i];
      EXPECT_EQ(bad, 0);

      const MetricTotals host = host_xent(y, labels, c.batch, out);
      EXPECT_EQ(got.seen, c.batch);
      EXPECT_EQ(got.correct, host.correct);
      EXPECT_NEAR(got.loss_sum, host.loss_sum, 1e-5 * c.batch + 1e-6 * std::fabs(host.loss_sum));
    }
  }
}

TEST(StepKernel, EvaluatesAsTheHostDoesInTf32Fast) {
  GPU_TEST_OR_SKIP();
  expect_evaluates_as_the_host("tf32_fast");
}
TEST(StepKernel, EvaluatesAsTheHostDoesInTf32x3Fast) {
  GPU_TEST_OR_SKIP();
  expect_evaluates_as_the_host("tf32x3_fast");
}
TEST(StepKernel, EvaluatesAsTheHostDoesInAuto) {
  GPU_TEST_OR_SKIP();
  expect_evaluates_as_the_host("auto");
}

TEST(StepKernel, GivesTheSameBitsOnEveryGrid) {
  GPU_TEST_OR_SKIP();
  for (const std::string& variant : {std::string("tf32_fast"), std::string("tf32x3_fast")}) {
    if (const char* why = gemm::unavailable_reason(gemm::find_variant(variant)))
      GTEST_SKIP() << why;
    SCOPED_TRACE(variant);
    Context ctx(Device::CUDA, variant, 3);
    Batch b(ctx, {37, 300, 129, 10}, 300, 5);
    StepKernel kernel(ctx, b.net.seq, 300, true);
    kernel.set_forward_splits(ctx, 2);  // the sums' order too
    for (int cluster : {1, 2}) {
      SCOPED_TRACE("clusters of " + std::to_string(cluster));
      kernel.set_cluster_size(ctx, cluster);
      std::vector<float> first;
      MetricTotals first_totals;
      // Grids in blocks (1 is one cluster), groups on the soonest cluster or round robin.
      for (const auto& [grid, by_cost] : std::vector<std::pair<int, bool>>{
               {0, true}, {1, true}, {3 * cluster, true}, {3 * cluster, false}, {0, false}}) {
        kernel.set_grid_limit(ctx, grid);
        kernel.set_schedule_by_cost(ctx, by_cost);
        Metrics metrics(ctx);
        kernel.evaluate(ctx, b.x, b.labels.data(), metrics);
        kernel.check(ctx);
        const MetricTotals t = metrics.read(ctx);
        const std::vector<float> y = kernel.outputs().download(ctx.stream());
        if (first.empty()) {
          EXPECT_GT(kernel.grid_blocks(300), 3 * cluster);
          first = y, first_totals = t;
          continue;
        }
        EXPECT_EQ(kernel.grid_blocks(300) % cluster, 0);
        EXPECT_EQ(y, first) << "grid limit " << grid << ", by cost " << by_cost;
        EXPECT_EQ(t.loss_sum, first_totals.loss_sum) << "grid limit " << grid;
        EXPECT_EQ(t.correct, first_totals.correct) << "grid limit " << grid;
      }
    }
  }
}

TEST(StepKernel, ByDefaultRunsTheWidestLayersTilesInOneWaveOfClusters) {
  DEFAULT_MODEL_OR_SKIP(m);
  const int cluster = m.kernel.cluster_size();
  EXPECT_GE(cluster, 2) << "16 clusters of 2 fit on any GPU with wgmma";
  EXPECT_EQ(m.kernel.grid_blocks(256) % cluster, 0);
  EXPECT_GE(m.kernel.grid_blocks(256) / cluster, 16) << "clusters of " << cluster;
  // A training launch has more groups of units than an evaluation: at least as many clusters.
  EXPECT_GE(m.kernel.grid_blocks(256, 1), m.kernel.grid_blocks(256));
  EXPECT_EQ(m.kernel.grid_blocks(256, 4) % cluster, 0);
  EXPECT_EQ(m.evaluated_rows(), 256);
}

TEST(StepKernel, RecordsEachUnitsPhasesInOrder) {
  DEFAULT_MODEL_OR_SKIP(m);
  m.kernel.record_timeline(true);
  EXPECT_EQ(m.evaluated_rows(), 256);
  int tiles = 0;
  for (const StepKernel::UnitTime& t : m.kernel.timeline(m.ctx)) {
    EXPECT_LE(t.wait_ns, t.start_ns);
    EXPECT_LE(t.start_ns, t.end_ns);
    if (t.kind != static_cast<int>(engine::step_plan::Kind::Forward)) {
      EXPECT_EQ(t.k_done_ns, 0);
      continue;
    }
    ++tiles;
    EXPECT_LE(t.start_ns, t.k_done_ns);
    EXPECT_LE(t.k_done_ns, t.all_staged_ns);
    EXPECT_LE(t.all_staged_ns, t.stored_ns);
    EXPECT_LE(t.stored_ns, t.end_ns);
  }
  EXPECT_EQ(tiles, 16 + 16 + 2);  // 128×128 tiles of 256×1024, 256×1024 and 256×10
}

void expect_trainer_evaluates_through_it(const std::string& variant) {
  if (const char* why = gemm::unavailable_reason(gemm::find_variant(variant))) GTEST_SKIP() << why;
  for (bool mse : {false, true}) {
    SCOPED_TRACE(variant + (mse ? " mean squared error" : " cross-entropy"));
    const std::vector<int> widths = {50, 96, 64, 6};
    const int rows = 600, max_batch = 128;  // 4 full batches and one of 88
    std::mt19937_64 rng(9);
    const Tensor x =
        Tensor::from_host(Device::CUDA, rows, widths[0], random_values(rng, rows * widths[0]));
    const LabelTensor labels(Device::CUDA, random_labels(rng, rows, widths.back()));
    const Tensor targets = Tensor::from_host(Device::CUDA, rows, widths.back(),
                                             random_values(rng, rows * widths.back()));
    MetricTotals totals[2];
    for (int with_kernel = 0; with_kernel < 2; ++with_kernel) {
      Context ctx(Device::CUDA, variant, 21);  // the same parameters both times
      Net net(ctx, widths, mlp_relus(widths.size()));
      engine::TrainerOptions o;
      o.max_batch = max_batch;
      o.step_kernel = with_kernel == 1;
      if (mse) o.loss = engine::TrainerOptions::Loss::MeanSquaredError;
      engine::Trainer trainer(ctx, net.seq, o);
      EXPECT_EQ(trainer.step_kernel_active(), with_kernel == 1) << trainer.step_kernel_note();
      totals[with_kernel] = mse ? trainer.evaluate(x, targets) : trainer.evaluate(x, labels);
    }
    EXPECT_EQ(totals[1].seen, rows);
    const double rel = 10 * tolerance_of(variant);
    EXPECT_NEAR(totals[1].loss_sum, totals[0].loss_sum, rel * std::fabs(totals[0].loss_sum));
    EXPECT_LE(std::abs(totals[1].correct - totals[0].correct), 2);
  }
}

TEST(StepKernel, TrainerEvaluatesThroughItInTf32Fast) {
  GPU_TEST_OR_SKIP();
  expect_trainer_evaluates_through_it("tf32_fast");
}
TEST(StepKernel, TrainerEvaluatesThroughItInTf32x3Fast) {
  GPU_TEST_OR_SKIP();
  expect_trainer_evaluates_through_it("tf32x3_fast");
}
TEST(StepKernel, TrainerEvaluatesThroughItInAuto) {
  GPU_TEST_OR_SKIP();
  expect_trainer_evaluates_through_it("auto");
}

// Three training steps through the kernel against three of the trainer's graph steps, from the
// same parameters on the same batches: every parameter within the bound below, and the losses.
// The bound: the two runs add the same products in other orders (K shared across a cluster, the
// bias gradients' rows in another grouping), so they differ by rounding at the variant's
// tolerance, which the updates carry into the parameters: 10 × tolerance × how far the
// parameters moved, plus 1e-6. Two kinds of rounding change a value by more than that:
// - a ReLU whose pre-activation rounds to the other side of 0 passes or stops a whole gradient
//   entry (on the H200 in TF32, 28 of 26,000 weights and 1 of 130 biases past the bound);
// - Adam's first steps move a weight by about lr × the sign of its gradient, and a gradient that
//   rounds near zero can change sign (in TF32, 38 of 26,000).
// So the fp32-accurate variant with SGD has every value within the bound; otherwise at most 0.5%
// of a parameter's values, and at least 1, may be past it. A tile, slice or unit done wrong moves
// whole blocks of values.
// widths and batch: the model's, by default a small one with a misaligned width. With
// per_block, the kernel must run some tiles a block (in clusters of several: step_plan's groups).
// cluster and grid, where not 0: the kernel's cluster size and grid limit (in blocks).
void expect_trains_as_the_graph_step(const std::string& variant, bool adam, bool mse,
                                     const std::vector<int>& widths = {100, 200, 130, 10},
                                     int batch = 64, bool per_block = false, int cluster = 0,
                                     int grid = 0) {
  SCOPED_TRACE(variant + (adam ? " Adam" : " SGD") + (mse ? " squared error" : " cross-entropy") +
               (cluster > 0 ? ", clusters of " + std::to_string(cluster) : "") +
               (grid > 0 ? ", a grid of " + std::to_string(grid) : ""));
  const int steps = 3;
  std::mt19937_64 rng(13);
  std::vector<Tensor> xs, targets;
  std::vector<LabelTensor> labels;
  for (int s = 0; s < steps; ++s) {
    xs.push_back(Tensor::from_host(Device::CUDA, batch, widths.front(),
                                   random_values(rng, batch * widths.front())));
    labels.emplace_back(Device::CUDA, random_labels(rng, batch, widths.back()));
    targets.push_back(Tensor::from_host(Device::CUDA, batch, widths.back(),
                                        random_values(rng, batch * widths.back())));
  }
  engine::TrainerOptions o;
  o.max_batch = batch;
  o.optimizer =
      adam ? engine::TrainerOptions::Optimizer::Adam : engine::TrainerOptions::Optimizer::Sgd;
  o.sgd.weight_decay = 1e-4f;
  o.adam.weight_decay = 1e-4f;
  if (mse) o.loss = engine::TrainerOptions::Loss::MeanSquaredError;

  std::vector<std::vector<float>> initial, graph, kernel_params;
  double graph_loss = 0, kernel_loss = 0;
  {  // the trainer's graph step
    Context ctx(Device::CUDA, variant, 21);
    Net net(ctx, widths, mlp_relus(widths.size()));
    for (engine::Parameter* p : net.seq.parameters())
      initial.push_back(p->value.download(ctx.stream()));
    engine::Trainer trainer(ctx, net.seq, o);
    for (int s = 0; s < steps; ++s)
      mse ? trainer.step(xs[s], targets[s]) : trainer.step(xs[s], labels[s]);
    graph_loss = trainer.take_metrics().loss_sum;
    for (engine::Parameter* p : net.seq.parameters())
      graph.push_back(p->value.download(ctx.stream()));
  }
  {  // the step kernel, with the same optimizer
    Context ctx(Device::CUDA, variant, 21);
    Net net(ctx, widths, mlp_relus(widths.size()));
    net.seq.prepare(ctx, batch);
    std::unique_ptr<engine::Optimizer> optimizer;
    if (adam)
      optimizer = std::make_unique<engine::Adam>(ctx, net.seq.parameters(), o.adam);
    else
      optimizer = std::make_unique<engine::Sgd>(ctx, net.seq.parameters(), o.sgd);
    StepKernel kernel(ctx, net.seq, batch, !mse);
    if (cluster > 0) kernel.set_cluster_size(ctx, cluster);
    kernel.set_grid_limit(ctx, grid);
    kernel.record_timeline(per_block);
    Metrics metrics(ctx);
    for (int s = 0; s < steps; ++s)
      kernel.train(ctx, xs[s], mse ? static_cast<const void*>(targets[s].data()) : labels[s].data(),
                   metrics, *optimizer);
    kernel.check(ctx);
    if (per_block) {
      ASSERT_GT(kernel.cluster_size(), 1);
      int alone = 0;  // units run by one block of a cluster
      for (const StepKernel::UnitTime& t : kernel.timeline(ctx)) alone += t.blocks == 1;
      EXPECT_GT(alone, 0) << "no tile ran a block each";
    }
    EXPECT_EQ(optimizer->read_steps(ctx), steps);
    kernel_loss = metrics.read(ctx).loss_sum;
    for (engine::Parameter* p : net.seq.parameters())
      kernel_params.push_back(p->value.download(ctx.stream()));
  }
  const double tol = tolerance_of(variant);
  const bool exact = gemm::find_variant(variant).precision == gemm::Precision::FP32;
  ASSERT_EQ(graph.size(), kernel_params.size());
  for (size_t i = 0; i < graph.size(); ++i) {
    double moved = 0;
    for (size_t j = 0; j < graph[i].size(); ++j)
      moved = std::max(moved, std::fabs(static_cast<double>(graph[i][j]) - initial[i][j]));
    EXPECT_GT(moved, 0.0) << "parameter " << i << " did not move";
    const double bound = 10 * tol * moved + 1e-6;
    size_t past = 0;
    for (size_t j = 0; j < graph[i].size(); ++j)
      if (!(std::fabs(static_cast<double>(graph[i][j]) - kernel_params[i][j]) <= bound)) ++past;
    const size_t allowed = exact && !adam ? 0 : std::max<size_t>(1, graph[i].size() / 200);
    EXPECT_LE(past, allowed) << "parameter " << i << ": " << past << " of " << graph[i].size()
                             << " values differ by more than " << bound;
  }
  EXPECT_NEAR(kernel_loss, graph_loss, 10 * tol * std::fabs(graph_loss));
}

// SGD and Adam, cross-entropy and the squared error; a test a variant (racecheck ran the three in
// one past sanitize.sh's 400 s a pair).
void expect_trains_as_the_graph_step_every_way(const std::string& variant) {
  if (const char* why = gemm::unavailable_reason(gemm::find_variant(variant))) GTEST_SKIP() << why;
  for (bool adam : {false, true})
    for (bool mse : {false, true}) expect_trains_as_the_graph_step(variant, adam, mse);
}
TEST(StepKernel, TrainsAsTheGraphStepDoesInTf32Fast) {
  GPU_TEST_OR_SKIP();
  expect_trains_as_the_graph_step_every_way("tf32_fast");
}
TEST(StepKernel, TrainsAsTheGraphStepDoesInTf32x3Fast) {
  GPU_TEST_OR_SKIP();
  expect_trains_as_the_graph_step_every_way("tf32x3_fast");
}
TEST(StepKernel, TrainsAsTheGraphStepDoesInAuto) {
  GPU_TEST_OR_SKIP();
  expect_trains_as_the_graph_step_every_way("auto");
}

// On one cluster, and on one block, each block runs every unit in turn: tiles of one layout that
// stage an MN-major operand through TMA (aligned) after tiles that do not (misaligned, copied by
// the threads), with the pipeline's phases carried from one to the next.
TEST(StepKernel, TrainsAsTheGraphStepDoesOnOneCluster) {
  GPU_TEST_OR_SKIP();
  for (const std::string& variant : {std::string("tf32_fast"), std::string("tf32x3_fast")}) {
    if (const char* why = gemm::unavailable_reason(gemm::find_variant(variant)))
      GTEST_SKIP() << why;
    for (int cluster : {1, 8})
      expect_trains_as_the_graph_step(variant, false, false, {100, 200, 130, 10}, 64, false,
                                      cluster, cluster);
  }
}

// The default model's weight gradients have more tiles than there are clusters of 4: they run a
// tile a block, each with its whole K, beside GEMMs whose tiles share K across a cluster.
TEST(StepKernel, TrainsAsTheGraphStepDoesWithATileABlock) {
  GPU_TEST_OR_SKIP();
  if (const char* why = gemm::unavailable_reason(gemm::find_variant("tf32_fast")))
    GTEST_SKIP() << why;
  expect_trains_as_the_graph_step("tf32_fast", false, false, {784, 1024, 1024, 10}, 256, true);
}

TEST(StepKernel, ReportsAWaitPastItsLimitAndRecovers) {
  DEFAULT_MODEL_OR_SKIP(m);
  for (int cluster : {1, 4}) {
    SCOPED_TRACE("clusters of " + std::to_string(cluster));
    m.kernel.set_cluster_size(m.ctx, cluster);
    Metrics metrics(m.ctx);
    // 1 ns: a unit whose inputs another cluster is still computing gives up at its first look
    // (the second layer's tiles start beside the first's, on clusters of their own).
    m.kernel.set_wait_timeout(1e-9);
    m.kernel.evaluate(m.ctx, m.batch.x, m.batch.labels.data(), metrics);
    EXPECT_THROW_WITH(m.kernel.check(m.ctx), gemm_mlp::Error, "gave up waiting for 'Forward ");
    m.kernel.set_wait_timeout(10.0);
    EXPECT_EQ(m.evaluated_rows(), 256);
  }
}

// GEMM_MLP_STEP_WAIT_S sets the default wait limit (sanitize.sh raises it); a bad value is
// refused by name. The variable is put back as it was (sanitize.sh sets it for this program).
TEST(StepKernel, RefusesABadWaitLimitFromTheEnvironment) {
  GPU_TEST_OR_SKIP();
  if (const char* why = gemm::unavailable_reason(gemm::find_variant("tf32_fast")))
    GTEST_SKIP() << why;
  const char* was = std::getenv("GEMM_MLP_STEP_WAIT_S");
  const std::string before = was != nullptr ? was : "";
  Context ctx(Device::CUDA, "tf32_fast", 1);
  Net net(ctx, {8, 16, 4}, mlp_relus(3));
  for (const char* bad : {"ten", "0", "-1", "5s", ""}) {
    SCOPED_TRACE(std::string("GEMM_MLP_STEP_WAIT_S='") + bad + "'");
    setenv("GEMM_MLP_STEP_WAIT_S", bad, 1);
    EXPECT_THROW_WITH(StepKernel(ctx, net.seq, 8, true), gemm_mlp::Error,
                      "GEMM_MLP_STEP_WAIT_S must be a number of seconds");
  }
  setenv("GEMM_MLP_STEP_WAIT_S", "2.5", 1);
  EXPECT_NO_THROW(StepKernel(ctx, net.seq, 8, true));
  if (was != nullptr)
    setenv("GEMM_MLP_STEP_WAIT_S", before.c_str(), 1);
  else
    unsetenv("GEMM_MLP_STEP_WAIT_S");
}

TEST(StepKernel, SaysWhereItDoesNotServe) {
  GPU_TEST_OR_SKIP();
  Context ctx(Device::CUDA, "vec", 1);
  Net net(ctx, {8, 16, 4}, mlp_relus(3));
  EXPECT_NE(StepKernel::unavailable_reason(ctx, net.seq).find("does not serve variant vec"),
            std::string::npos);
  EXPECT_THROW_WITH(StepKernel(ctx, net.seq, 8, true), gemm_mlp::Error, "variant vec");
  engine::TrainerOptions o;
  o.max_batch = 8;
  o.step_kernel = true;
  engine::Trainer trainer(ctx, net.seq, o);
  EXPECT_FALSE(trainer.step_kernel_active());
  EXPECT_NE(trainer.step_kernel_note().find("training and evaluating without it"),
            std::string::npos);

  if (gemm::unavailable_reason(gemm::find_variant("tf32_fast")) != nullptr) return;
  Context fast(Device::CUDA, "tf32_fast", 1);
  engine::Sequential relu_first;
  relu_first.add<engine::ReLU>();
  relu_first.add<engine::Linear>(fast, 8, 4);
  EXPECT_NE(StepKernel::unavailable_reason(fast, relu_first).find("module 0 (ReLU)"),
            std::string::npos);
  engine::Sequential deep;
  for (int l = 0; l < StepKernel::kMaxLayers + 1; ++l) deep.add<engine::Linear>(fast, 4, 4);
  EXPECT_NE(StepKernel::unavailable_reason(fast, deep).find("9 Linear layers"), std::string::npos);
  Net small(fast, {8, 16, 4}, mlp_relus(3));
  StepKernel kernel(fast, small.seq, 8, true);
  for (int cluster : {0, StepKernel::kMaxClusterBlocks + 1})
    EXPECT_THROW_WITH(kernel.set_cluster_size(fast, cluster), gemm_mlp::Error,
                      "a cluster is 1..8 blocks, got " + std::to_string(cluster));
}

}  // namespace
