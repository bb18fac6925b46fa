#include "apps/train_mlp/epoch.h"

#include <algorithm>
#include <iostream>

#include "apps/train_mlp/stop.h"
#include "models/mlp.h"

namespace {

// The trainer's fill: the loader gathers the batch of the device's step counter, on the trainer's
// stream.
engine::Trainer::Fill gather_from(data::BatchLoader& loader) {
  return [&loader](cudaStream_t stream, const int64_t* step) { loader.batch_at(step, stream); };
}

}  // namespace

int run_epoch(engine::Trainer& trainer, data::BatchLoader& loader, const engine::Tensor& x,
              const engine::LabelTensor& y, Progress* progress, int first) {
  const engine::Trainer::Fill gather = gather_from(loader);
  const int batches = loader.num_batches(), b = loader.batch_size();
  for (int i = first; i < batches; ++i) {
    if (stop_signal() != 0) return i;
    const int size = std::min(b, loader.count() - i * b);
    // Each step gathers the next one's batch at its end, off the next step's chain, but not across
    // the epoch's end: the next epoch has a new order.
    const auto plan =
        i + 1 < batches ? engine::Trainer::Gather::ThisAndNext : engine::Trainer::Gather::ThisStep;
    if (size == x.rows())
      trainer.step(x, y, gather, plan);
    else  // the epoch's last, partial batch: the first rows of the same buffers
      trainer.step(x.first_rows(size), y.first(size), gather, plan);
    if (progress) progress->update(i + 1);
  }
  return batches;
}

double profile_gemm_seconds(const Options& o, engine::Context& ctx, data::BatchLoader& loader,
                            const engine::Tensor& x, const engine::LabelTensor& y, int features,
                            int classes, int64_t total_steps, const char* variant) {
  const int gemms_per_step = 3 * static_cast<int>(o.hidden.size()) + 2;
  ctx.reserve_gemm_timers(gemms_per_step * loader.num_batches());
  const engine::Trainer::Fill gather = gather_from(loader);
  // The profiled steps run serially (one kernel at a time): the step's branches would overlap the
  // GEMMs, and their intervals would then add up to more than the time they took.
  const auto serial = [&](bool graph) {
    engine::TrainerOptions t = trainer_options(o, total_steps, graph);
    t.parallel_step = false;
    return t;
  };
  if (!o.no_graph) {
    models::MLP scratch(ctx, features, o.hidden, classes);
    engine::Trainer profiler(ctx, scratch, serial(true));
    ctx.set_graph_gemm_timing(true);
    loader.begin_epoch(0);
    double replayed_s = 0.0;
    int replays = 0;
    for (int i = 0; i < loader.count() / o.batch; ++i) {  // the full batches
      profiler.step(x, y, gather);
      if (!profiler.graph_active()) continue;
      try {
        replayed_s += ctx.graph_gemm_seconds();  // waits for the replay
      } catch (const gemm_mlp::Error& e) {       // e.g. a driver that cannot time events in a graph
        std::cout << "[" << variant << "] note: " << e.what() << "; timing GEMMs one by one\n";
        replays = 0;
        break;
      }
      ++replays;
    }
    ctx.set_graph_gemm_timing(false);
    if (replays > 0) return replayed_s / replays * loader.count() / o.batch;
  }
  models::MLP scratch(ctx, features, o.hidden, classes);
  engine::Trainer profiler(ctx, scratch, serial(false));
  loader.begin_epoch(0);
  profiler.step(x, y, gather);  // untimed: the first launch of each kernel loads it
  ctx.begin_epoch();
  run_epoch(profiler, loader, x, y, nullptr);
  return ctx.end_epoch().gemm_s;
}
