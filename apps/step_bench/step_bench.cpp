// step_bench: the step kernel (engine/step_kernel.h) against the same work launched as today, in
// one process: docs/KERNELS.md, "The step as one kernel".
//
//   step_bench [--models 784-1024-1024-10:256,...] [--variants tf32_fast,tf32x3_fast]
//              [--splits 1] [--clusters 1,2,4,8] [--rows 10000] [--reps 30] [--warmup 3]
//              [--grid 0] [--tile-per-block 1] [--by-cost 1] [--train] [--steps 20]
//              [--gather] [--steps-per-launch 1,4,16] [--csv FILE] [--timeline FILE]
//
// For each model (widths:batch), variant, count of K slices per forward tile, cluster size,
// whether large GEMMs run a tile a block and whether groups go to clusters by the unit costs or
// round robin (StepKernel::set_forward_splits, set_cluster_size, set_tile_per_block,
// set_schedule_by_cost), on every resident cluster or on --grid
// blocks at most (StepKernel::set_grid_limit: 1 runs every unit on one block, in the plan's
// order, so that a tile's timeline shows it after others of its kind), two trainers built from
// one seed (the same parameters) run the same work: launched as today, and through the step
// kernel (TrainerOptions::step_kernel: one launch a batch).
// - The evaluation (the default): the same random set of `rows` rows, launch by launch (each
//   batch's forward GEMMs and its loss kernel) against one launch a batch. Each evaluation is
//   timed on the host's clock from its first launch to its result (each waits once).
// - With --train, training steps: the graph step (a CUDA graph a step, the trainer's default)
//   against one launch a step, `steps` steps on the first batch of those rows, again and again,
//   timed on the host's clock from the first step queued to the metrics read (one wait), and
//   divided by `steps`. Forward splits other than 1 are refused (the training step's tiles are
//   unsplit).
// - With --train --gather, the steps train on the rows' batches as train_mlp does, each side with
//   a data loader of its own (the same seed: the same batches; the rest of the rows dropped, so
//   every batch is full): the graph step gathering the next batch at its end (the loader's
//   kernel), the step kernel inside its launch (Trainer::set_batch_source), up to each
//   --steps-per-launch count of steps a launch (Trainer::steps; scope train_gather_xN).
// The two sides alternate, after warm-up; the summary is the median. Then one launch of a full
// batch (an evaluation, or a training step) records its units' timeline: the grid, the span from
// the first unit's start to the last one's end, and the blocks' busy fraction (the units' time
// times their cluster's blocks, over grid · span), and per kind of unit and layer the count and
// mean time (--timeline writes every unit's times). The two sides' mean losses (their last timed
// runs', after as many steps) are printed beside each other, as a check; a * marks the cluster size
// the trainer runs by default (StepKernel::cluster_size()).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "apps/bench_common/timing.h"
#include "apps/common/model_spec.h"
#include "data/loader.h"
#include "engine/engine.h"
#include "engine/step_plan.h"
#include "models/mlp.h"

namespace {

// A model of at least one hidden layer: "784-1024-1024-10:256".
using ModelCase = apps::ModelSpec;
ModelCase parse_model(const std::string& spec) {
  return apps::parse_model_spec("--models", spec, 3);
}

engine::TrainerOptions trainer_options(int batch, bool step_kernel) {
  engine::TrainerOptions o;
  o.max_batch = batch;
  o.step_kernel = step_kernel;
  return o;
}

// A model and its trainer, launching as today or through the step kernel. Two built from the same
// seed hold the same parameters.
struct Model {
  engine::Context ctx;
  models::MLP net;
  engine::Trainer trainer;
  Model(const std::string& variant, const ModelCase& m, bool step_kernel)
      : ctx(engine::Device::CUDA, variant, 42),
        net(ctx, m.widths.front(), {m.widths.begin() + 1, m.widths.end() - 1}, m.widths.back()),
        trainer(ctx, net, trainer_options(m.batch, step_kernel)) {}
};

// A side's training on the rows' batches (--gather): its loader, and where in its epochs it is.
struct Batches {
  data::BatchLoader loader;
  engine::Tensor x;
  engine::LabelTensor y;
  int epoch = 0, next = 0;  // the epoch begun, and its next batch
  Batches(const data::Dataset& set, int batch, cudaStream_t stream)
      : loader(set, batch, 5, engine::Device::CUDA, true, stream),
        x(engine::Tensor::view(engine::Device::CUDA, loader.buffer().x, batch, set.features())),
        y(engine::LabelTensor::view(engine::Device::CUDA, loader.buffer().y, batch)) {
    loader.begin_epoch(epoch);
  }
  // `steps` steps, up to per_launch a call of trainer.steps() within an epoch, each launch's last
  // step gathering the next batch where it is in the same epoch.
  void train(engine::Trainer& trainer, int steps, int per_launch) {
    const engine::Trainer::Fill fill = [this](cudaStream_t stream, const int64_t* step) {
      loader.batch_at(step, stream);
    };
    for (int done = 0; done < steps;) {
      if (next == loader.num_batches()) loader.begin_epoch(++epoch), next = 0;
      const int count = std::min({per_launch, steps - done, loader.num_batches() - next});
      next += count;
      done += count;
      trainer.steps(x, y, fill, count,
                    next < loader.num_batches() ? engine::Trainer::Gather::ThisAndNext
                                                : engine::Trainer::Gather::ThisStep);
    }
  }
};

template <class F>
double time_ms(F&& run, double* mean_loss) {
  const auto start = std::chrono::steady_clock::now();
  const engine::MetricTotals t = run();
  const auto stop = std::chrono::steady_clock::now();
  *mean_loss = t.mean_loss();
  return std::chrono::duration<double, std::milli>(stop - start).count();
}

// Every (f, s) pair of values of two options, f outermost.
std::vector<std::pair<int, int>> pairs(const std::vector<int>& first,
                                       const std::vector<int>& second) {
  std::vector<std::pair<int, int>> all;
  for (int f : first)
    for (int s : second) all.emplace_back(f, s);
  return all;
}

// One launch's timeline, summed up: the span from the first unit's start to the last one's end,
// the blocks' busy fraction, and per kind, part and layer the count, mean time and wait, and for
// GEMM tiles the mean of each phase: the K loop (to thread 0's share of the tile staged), the
// consumers' barrier (every share staged), the store (with the cluster's sum).
struct TimelineSummary {
  double span_us = 0, busy_fraction = 0;
  std::string per_kind;
};

// `prefix` starts each of the units' rows written to `csv`.
TimelineSummary summarize(const std::vector<engine::StepKernel::UnitTime>& t, int grid,
                          const std::string& prefix, std::ostream& csv) {
  TimelineSummary sum;
  if (t.empty()) return sum;
  long long first = t.front().start_ns, last = t.front().end_ns, busy = 0;
  for (const auto& u : t) {
    first = std::min(first, u.start_ns);
    last = std::max(last, u.end_ns);
    busy += (u.end_ns - u.start_ns) * u.blocks;
  }
  sum.span_us = (last - first) / 1e3;
  sum.busy_fraction = static_cast<double>(busy) / (double(last - first) * grid);
  struct KindTimes {
    int count = 0;
    double unit_us = 0, wait_us = 0, k_loop_us = 0, barrier_us = 0, store_us = 0;
  };
  const auto us = [](long long from, long long to) { return (to - from) / 1e3; };
  const auto at = [&](long long ns) { return ns != 0 ? us(first, ns) : 0.0; };
  std::map<std::tuple<int, int, int>, KindTimes> kinds;
  for (size_t i = 0; i < t.size(); ++i) {
    const auto& u = t[i];
    KindTimes& k = kinds[{u.kind, u.part, u.layer}];
    ++k.count;
    k.unit_us += us(u.start_ns, u.end_ns);
    k.wait_us += us(u.wait_ns, u.start_ns);
    if (u.k_done_ns != 0) {
      k.k_loop_us += us(u.start_ns, u.k_done_ns);
      k.barrier_us += us(u.k_done_ns, u.all_staged_ns);
      k.store_us += us(u.all_staged_ns, u.stored_ns);
    }
    csv << prefix << i << ','
        << engine::step_plan::kind_name(static_cast<engine::step_plan::Kind>(u.kind)) << ','
        << u.part << ',' << u.layer << ',' << u.block << ',' << u.sm << ',' << us(first, u.wait_ns)
        << ',' << us(first, u.start_ns) << ',' << at(u.k_done_ns) << ',' << at(u.all_staged_ns)
        << ',' << at(u.stored_ns) << ',' << us(first, u.end_ns) << '\n';
  }
  for (const auto& [key, k] : kinds) {
    const char* parts[] = {"", " slice", " sum"};
    char line[160];
    int n = std::snprintf(
        line, sizeof line, "\n     %s %d%s: %d x %.1f us (wait %.1f",
        engine::step_plan::kind_name(static_cast<engine::step_plan::Kind>(std::get<0>(key))),
        std::get<2>(key), parts[std::get<1>(key)], k.count, k.unit_us / k.count,
        k.wait_us / k.count);
    if (k.k_loop_us > 0)
      n += std::snprintf(line + n, sizeof line - n, ", K loop %.1f, barrier %.1f, store %.1f",
                         k.k_loop_us / k.count, k.barrier_us / k.count, k.store_us / k.count);
    std::snprintf(line + n, sizeof line - n, ")");
    sum.per_kind += line;
  }
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"the step kernel against the same work launched as today"};
  std::vector<std::string> model_specs = {"784-1024-1024-10:256", "784-512-512-10:128",
                                          "784-4096-4096-10:512"};
  std::vector<std::string> variants = {"tf32_fast", "tf32x3_fast"};
  std::vector<int> splits = {1}, clusters = {1, 2, 4, 8}, per_block = {1}, by_cost = {1};
  int rows = 10000, reps = 30, warmup = 3, grid_limit = 0, steps = 20;
  bool train = false, gather = false;
  std::vector<int> steps_per_launch = {1};
  std::string csv_path, timeline_path;
  app.add_option("--models", model_specs, "models as WIDTHS:BATCH")->delimiter(',');
  app.add_option("--variants", variants, "variants the step kernel serves")->delimiter(',');
  app.add_option("--splits", splits, "K slices per forward tile, each timed")
      ->delimiter(',')
      ->check(CLI::Range(1, 64));
  app.add_option("--clusters", clusters, "blocks per cluster, each timed")
      ->delimiter(',')
      ->check(CLI::Range(1, engine::StepKernel::kMaxClusterBlocks));
  app.add_option("--rows", rows, "rows evaluated")->check(CLI::Range(1, 1 << 20));
  app.add_option("--reps", reps, "timed runs per side")->check(CLI::Range(1, 1000));
  app.add_option("--warmup", warmup, "untimed runs per side first")->check(CLI::Range(0, 100));
  app.add_option("--tile-per-block", per_block,
                 "1: GEMMs of more tiles than clusters run a tile a block where the tile cost "
                 "says that is sooner; 0: a tile a cluster; each timed")
      ->delimiter(',')
      ->check(CLI::Range(0, 1));
  app.add_option("--by-cost", by_cost,
                 "1: each group of units on the cluster where the unit costs say it starts "
                 "soonest; 0: round robin; each timed")
      ->delimiter(',')
      ->check(CLI::Range(0, 1));
  app.add_option("--grid", grid_limit, "at most this many blocks (0: every resident cluster)")
      ->check(CLI::Range(0, 1 << 16));
  app.add_flag("--train", train, "time training steps (graph step against the step kernel)");
  app.add_option("--steps", steps, "with --train: steps per timed run")
      ->check(CLI::Range(1, 10000));
  app.add_flag("--gather", gather,
               "with --train: train on the rows' batches, each step gathering the next one (the "
               "step kernel inside its launch)");
  app.add_option("--steps-per-launch", steps_per_launch,
                 "with --gather: the step kernel's steps per launch, each timed")
      ->delimiter(',')
      ->check(CLI::Range(1, 10000));
  app.add_option("--csv", csv_path, "also write the table here");
  app.add_option("--timeline", timeline_path, "write every recorded unit's times here (CSV)");
  CLI11_PARSE(app, argc, argv);

  try {
    if (!gemm::cuda_device_available()) throw gemm_mlp::Error("step_bench needs a GPU");
    if (train && std::any_of(splits.begin(), splits.end(), [](int s) { return s != 1; }))
      throw gemm_mlp::Error("step_bench: --train takes --splits 1 only (unsplit training tiles)");
    if (gather && !train) throw gemm_mlp::Error("step_bench: --gather is for --train");
    if (!gather && steps_per_launch != std::vector<int>{1})
      throw gemm_mlp::Error(
          "step_bench: --steps-per-launch needs --gather (the batches a launch "
          "gathers)");
    const std::string base_scope = train ? (gather ? "train_gather" : "train") : "evaluate";
    std::vector<ModelCase> models;
    for (const std::string& s : model_specs) models.push_back(parse_model(s));
    std::ostringstream table, timeline;
    timeline << "scope,model,batch,variant,forward_splits,cluster,tile_per_block,by_cost,unit,"
                "kind,part,layer,block,sm,wait_us,start_us,k_done_us,all_staged_us,stored_us,"
                "end_us\n";
    // rows: the rows evaluated, or with --train the steps of a timed run; today_ms: launch by
    // launch (evaluate) or the graph step (train), per run, or per step with --train.
    table
        << "scope,model,batch,variant,forward_splits,cluster,tile_per_block,by_cost,rows_or_steps,"
           "today_ms,step_kernel_ms,ratio,default_cluster,grid,units,span_us,busy_fraction,"
           "loss_today,loss_step_kernel\n";
    std::printf("%s: %s against the step kernel\n", base_scope.c_str(),
                train ? "the graph step (per step)" : "launch by launch (per evaluation)");
    std::printf("%-22s %-12s %6s %7s %5s %4s %10s %10s %7s %5s %6s %9s %6s\n", "model:batch",
                "variant", "splits", "cluster", "tpb", "cost", "today", "kernel", "ratio", "grid",
                "units", "span_us", "busy");
    for (const ModelCase& m : models) {
      for (const std::string& variant : variants) {
        Model today(variant, m, false), on_kernel(variant, m, true);
        engine::StepKernel* kernel = on_kernel.trainer.step_kernel();
        if (kernel == nullptr)
          throw gemm_mlp::Error(variant + ": " + on_kernel.trainer.step_kernel_note());
        const int default_cluster = kernel->cluster_size();  // what the trainer runs
        kernel->set_grid_limit(on_kernel.ctx, grid_limit);
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
        std::uniform_int_distribution<int> label(0, m.widths.back() - 1);
        std::vector<float> xh(static_cast<size_t>(rows) * m.widths.front());
        std::vector<int32_t> yh(rows);
        for (float& v : xh) v = pixel(rng);
        for (int32_t& v : yh) v = label(rng);
        const engine::Tensor x =
            engine::Tensor::from_host(engine::Device::CUDA, rows, m.widths.front(), xh);
        const engine::LabelTensor labels(engine::Device::CUDA, yh);
        const int batch = std::min(rows, m.batch);
        const engine::Tensor xb =
            engine::Tensor::view(engine::Device::CUDA, x.data(), batch, m.widths.front());
        // --gather: the rows as a data set, each side's batches from a loader of its own.
        data::Dataset set;
        set.count = rows, set.rows = 1, set.cols = m.widths.front(), set.classes = m.widths.back();
        set.images = xh, set.labels = yh;
        std::unique_ptr<Batches> batches_today, batches_kernel;
        if (gather) {
          if (rows < m.batch)
            throw gemm_mlp::Error("step_bench: --gather needs --rows >= the batch (" +
                                  std::to_string(m.batch) + ")");
          batches_today = std::make_unique<Batches>(set, m.batch, today.ctx.stream());
          batches_kernel = std::make_unique<Batches>(set, m.batch, on_kernel.ctx.stream());
          on_kernel.trainer.set_batch_source(batches_kernel->loader.source());
        }
        int per_launch = 1;  // the step kernel's, with --gather
        // `count` training steps of a side: on the first batch, or with --gather on its loader's
        // batches, up to `launch` steps a call of Trainer::steps.
        const auto train_steps = [&](engine::Trainer& trainer, Batches* batches, int count,
                                     int launch) {
          if (batches == nullptr) {
            for (int i = 0; i < count; ++i) trainer.step(xb, labels);
          } else {
            batches->train(trainer, count, launch);
          }
        };
        // One timed run of either side: an evaluation of every row, or `steps` training steps,
        // `launch` (read at each run) a launch.
        const auto run = [&](engine::Trainer& trainer, Batches* batches, const int& launch) {
          return [&, batches] {
            if (!train) return trainer.evaluate(x, labels);
            train_steps(trainer, batches, steps, launch);
            return trainer.take_metrics();
          };
        };
        const int one_a_launch = 1;  // the graph step's
        const auto run_today = run(today.trainer, batches_today.get(), one_a_launch),
                   run_kernel = run(on_kernel.trainer, batches_kernel.get(), per_launch);

        for (const auto& [split, cluster] : pairs(splits, clusters))
          for (const auto& [tile_per_block, cost] : pairs(per_block, by_cost))
            for (const int launch_steps : gather ? steps_per_launch : std::vector<int>{1}) {
              per_launch = launch_steps;
              const std::string scope =
                  gather ? base_scope + "_x" + std::to_string(launch_steps) : base_scope;
              kernel->set_forward_splits(on_kernel.ctx, split);
              kernel->set_cluster_size(on_kernel.ctx, cluster);
              kernel->set_tile_per_block(on_kernel.ctx, tile_per_block != 0);
              kernel->set_schedule_by_cost(on_kernel.ctx, cost != 0);
              double loss_a = 0, loss_b = 0;
              for (int i = 0; i < warmup; ++i) {
                time_ms(run_today, &loss_a);
                time_ms(run_kernel, &loss_b);
              }
              std::vector<double> ms_a, ms_b;
              for (int i = 0; i < reps; ++i) {
                ms_a.push_back(time_ms(run_today, &loss_a));
                ms_b.push_back(time_ms(run_kernel, &loss_b));
              }
              const double per = train ? steps : 1;
              const double a = bench::summarize(ms_a).median_ms / per,
                           b = bench::summarize(ms_b).median_ms / per;

              // One full batch's timeline: an evaluation, or a training step (the graph step takes
              // one too, so that both sides have trained as many steps when their losses print).
              kernel->record_timeline(true);
              if (train) {
                train_steps(on_kernel.trainer, batches_kernel.get(), per_launch, per_launch);
                on_kernel.trainer.take_metrics();
                train_steps(today.trainer, batches_today.get(), per_launch, 1);
                today.trainer.take_metrics();
              } else {
                engine::Metrics metrics(on_kernel.ctx);
                kernel->evaluate(on_kernel.ctx, xb, labels.data(), metrics);
              }
              kernel->check(on_kernel.ctx);
              const std::vector<engine::StepKernel::UnitTime> t = kernel->timeline(on_kernel.ctx);
              kernel->record_timeline(false);
              const int grid = kernel->grid_blocks(batch, train ? per_launch : 0);
              const std::string model = m.text.substr(0, m.text.find(':'));
              std::ostringstream prefix;
              prefix << scope << ',' << model << ',' << m.batch << ',' << variant << ',' << split
                     << ',' << cluster << ',' << tile_per_block << ',' << cost << ',';
              const TimelineSummary sum = summarize(t, grid, prefix.str(), timeline);

              if (gather) std::printf("%s: ", scope.c_str());
              std::printf(
                  "%-22s %-12s %6d %6d%s %5d %4d %8.3fms %8.3fms %7.3f %5d %6zu %9.1f %6.3f   "
                  "(mean loss %.6f | %.6f)\n",
                  m.text.c_str(), variant.c_str(), split, cluster,
                  cluster == default_cluster ? "*" : " ", tile_per_block, cost, a, b, b / a, grid,
                  t.size(), sum.span_us, sum.busy_fraction, loss_a, loss_b);
              table << prefix.str() << (train ? steps : rows) << ',' << a << ',' << b << ','
                    << b / a << ',' << default_cluster << ',' << grid << ',' << t.size() << ','
                    << sum.span_us << ',' << sum.busy_fraction << ',' << loss_a << ',' << loss_b
                    << '\n';
              std::printf("   units:%s\n", sum.per_kind.c_str());
              std::fflush(stdout);
            }
      }
    }
    if (!timeline_path.empty()) {
      std::ofstream out(timeline_path);
      out << timeline.str();
      if (!out) throw gemm_mlp::Error("step_bench: cannot write " + timeline_path);
    }
    if (!csv_path.empty()) {
      std::ofstream out(csv_path);
      out << table.str();
      if (!out) throw gemm_mlp::Error("step_bench: cannot write " + csv_path);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "step_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
