// step_bench: the step kernel's evaluation (engine/step_kernel.h) against the same evaluation
// launch by launch, in one process: docs/KERNELS.md, "The step as one kernel".
//
//   step_bench [--models 784-1024-1024-10:256,...] [--variants tf32_fast,tf32x3_fast]
//              [--rows 10000] [--reps 30] [--warmup 3] [--csv FILE]
//
// For each model (widths:batch) and variant, two trainers built from the same seed (the same
// parameters) evaluate the same random set of `rows` rows: one launch by launch (each batch's
// forward GEMMs and its loss kernel), one through the step kernel (one launch a batch). Each
// evaluation is timed on the host's clock from the first launch to its result (Trainer::evaluate
// waits once), the two alternating, after warm-up; the summary is the median. Then one launch of
// a full batch records its units' timeline: the grid, the span from the first unit's start to the
// last one's end, and the blocks' busy fraction (the units' time over grid · span). The two
// evaluations' mean losses are printed beside each other, as a check.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "apps/bench_common/timing.h"
#include "engine/engine.h"
#include "models/mlp.h"

namespace {

struct ModelCase {
  std::vector<int> widths;
  int batch = 0;
  std::string text;
};

// "784-1024-1024-10:256" → widths and batch.
ModelCase parse_model(const std::string& spec) {
  const size_t colon = spec.find(':');
  if (colon == std::string::npos) throw CLI::ValidationError("--models", spec + ": no ':BATCH'");
  ModelCase m;
  m.text = spec;
  std::stringstream widths(spec.substr(0, colon));
  for (std::string w; std::getline(widths, w, '-');) m.widths.push_back(std::stoi(w));
  m.batch = std::stoi(spec.substr(colon + 1));
  if (m.widths.size() < 3 || m.batch < 1 ||
      std::any_of(m.widths.begin(), m.widths.end(), [](int w) { return w < 1; }))
    throw CLI::ValidationError("--models", spec + ": widths IN-H...-OUT (>= 1) and a batch >= 1");
  return m;
}

struct Side {
  engine::Context ctx;
  models::MLP net;
  engine::Trainer trainer;
  Side(const std::string& variant, const ModelCase& m, bool step_kernel)
      : ctx(engine::Device::CUDA, variant, 42),
        net(ctx, m.widths.front(), {m.widths.begin() + 1, m.widths.end() - 1}, m.widths.back()),
        trainer(ctx, net, options(m.batch, step_kernel)) {}
  static engine::TrainerOptions options(int batch, bool step_kernel) {
    engine::TrainerOptions o;
    o.max_batch = batch;
    o.step_kernel = step_kernel;
    return o;
  }
};

double evaluate_ms(engine::Trainer& trainer, const engine::Tensor& x,
                   const engine::LabelTensor& labels, double* mean_loss) {
  const auto start = std::chrono::steady_clock::now();
  const engine::MetricTotals t = trainer.evaluate(x, labels);
  const auto stop = std::chrono::steady_clock::now();
  *mean_loss = t.mean_loss();
  return std::chrono::duration<double, std::milli>(stop - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"the step kernel's evaluation against launch by launch"};
  std::vector<std::string> model_specs = {"784-1024-1024-10:256", "784-512-512-10:128",
                                          "784-4096-4096-10:512"};
  std::vector<std::string> variants = {"tf32_fast", "tf32x3_fast"};
  int rows = 10000, reps = 30, warmup = 3;
  std::string csv_path;
  app.add_option("--models", model_specs, "models as WIDTHS:BATCH")->delimiter(',');
  app.add_option("--variants", variants, "variants the step kernel serves")->delimiter(',');
  app.add_option("--rows", rows, "rows evaluated")->check(CLI::Range(1, 1 << 20));
  app.add_option("--reps", reps, "timed evaluations per side")->check(CLI::Range(1, 1000));
  app.add_option("--warmup", warmup, "untimed evaluations per side first")
      ->check(CLI::Range(0, 100));
  app.add_option("--csv", csv_path, "also write the table here");
  CLI11_PARSE(app, argc, argv);

  try {
    if (!gemm::cuda_device_available()) throw gemm_mlp::Error("step_bench needs a GPU");
    std::vector<ModelCase> models;
    for (const std::string& s : model_specs) models.push_back(parse_model(s));
    std::ostringstream table;
    table << "model,batch,variant,rows,launch_by_launch_ms,step_kernel_ms,ratio,grid,units,"
             "span_us,busy_fraction,loss_launch_by_launch,loss_step_kernel\n";
    std::printf("%-22s %-12s %10s %10s %7s %5s %6s %9s %6s\n", "model:batch", "variant", "launches",
                "kernel", "ratio", "grid", "units", "span_us", "busy");
    for (const ModelCase& m : models) {
      for (const std::string& variant : variants) {
        Side launches(variant, m, false), kernel(variant, m, true);
        if (!kernel.trainer.step_kernel_active())
          throw gemm_mlp::Error(variant + ": " + kernel.trainer.step_kernel_note());
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

        double loss_a = 0, loss_b = 0;
        for (int i = 0; i < warmup; ++i) {
          evaluate_ms(launches.trainer, x, labels, &loss_a);
          evaluate_ms(kernel.trainer, x, labels, &loss_b);
        }
        std::vector<double> ms_a, ms_b;
        for (int i = 0; i < reps; ++i) {
          ms_a.push_back(evaluate_ms(launches.trainer, x, labels, &loss_a));
          ms_b.push_back(evaluate_ms(kernel.trainer, x, labels, &loss_b));
        }
        const double a = bench::summarize(ms_a).median_ms, b = bench::summarize(ms_b).median_ms;

        // One full batch's timeline, on a kernel of its own over the same network.
        engine::StepKernel probe(kernel.ctx, kernel.net, m.batch, true);
        probe.record_timeline(true);
        engine::Metrics metrics(kernel.ctx);
        const engine::Tensor xb = engine::Tensor::view(engine::Device::CUDA, x.data(),
                                                       std::min(rows, m.batch), m.widths.front());
        probe.evaluate(kernel.ctx, xb, labels.data(), metrics);
        probe.check(kernel.ctx);
        const std::vector<engine::StepKernel::UnitTime> t = probe.timeline(kernel.ctx);
        long long first = t.front().start_ns, last = t.front().end_ns, busy = 0;
        for (const auto& u : t) {
          first = std::min(first, u.start_ns);
          last = std::max(last, u.end_ns);
          busy += u.end_ns - u.start_ns;
        }
        const int grid = probe.grid_blocks(static_cast<int>(xb.rows()));
        const double span_us = (last - first) / 1e3;
        const double busy_fraction = static_cast<double>(busy) / (double(last - first) * grid);

        std::printf(
            "%-22s %-12s %8.3fms %8.3fms %7.3f %5d %6zu %9.1f %6.3f   (mean loss %.6f | %.6f)\n",
            m.text.c_str(), variant.c_str(), a, b, b / a, grid, t.size(), span_us, busy_fraction,
            loss_a, loss_b);
        table << m.text.substr(0, m.text.find(':')) << ',' << m.batch << ',' << variant << ','
              << rows << ',' << a << ',' << b << ',' << b / a << ',' << grid << ',' << t.size()
              << ',' << span_us << ',' << busy_fraction << ',' << loss_a << ',' << loss_b << '\n';
      }
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
