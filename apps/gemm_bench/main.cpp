// gemm_bench: times the device GEMM variants against cuBLAS, after validating each one.
//
//   gemm_bench                                   every device variant, the default shapes
//   gemm_bench --variants naive,vec --shapes 4096,256x1024x784:NT --csv out.csv
//   gemm_bench --variants cpu                    the host variant, without a GPU (--csv and --json
//                                                work; --auto-table and --device do not apply)
//   gemm_bench --list
//   gemm_bench --from-json a.json,b.json --auto-table kernels/auto_table.inc
//                                                the `auto` table from earlier runs' --json files
//                                                (one GPU's), timing nothing
//
// Per shape (device_case.h): the variant is validated against cuBLAS fp32 on the same inputs,
// then timed (timing.h: CUDA events per run, L2 flushed and C poisoned before each, median of
// --reps). cuBLAS fp32 is always timed on the same shape, and cuBLAS TF32 beside any TF32
// variant. A failing variant is reported FAILED and makes the exit status 1.
//
// --max-seconds-per-case caps the timed reps of a slow case (naive at 8192³): it then runs fewer
// reps, at least 3, and says so in the table and files. --skip-slow skips such a case instead.
//
// --auto-table writes the table of the `auto` variant (auto_table.h): per shape and layout, the
// fastest correct fp32 kernel of this project, from this run or (--from-json) from earlier runs.
// A shape where no such kernel was timed gets no line, is named, and makes the exit status 1.
//
// Numeric flags are decimal, finite and in range; the output files' folders, and every shape's
// memory (host for the cpu variant, the GPU's free memory for the others), are checked before the
// first case runs (base/memory_limit.h).
//
// The files: shapes (--shapes), device_info (the GPU), device_case (validate and time one shape),
// host_bench (--variants cpu), report (table, CSV, JSON), auto_table (--auto-table), this one
// (the command line and the run).
#include <cuda_runtime_api.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "apps/common/number_flags.h"
#include "apps/gemm_bench/auto_table.h"
#include "apps/gemm_bench/device_case.h"
#include "apps/gemm_bench/device_info.h"
#include "apps/gemm_bench/host_bench.h"
#include "apps/gemm_bench/report.h"
#include "base/cuda_check.h"
#include "kernels/gemm.h"
#include "base/memory_limit.h"

namespace {

using bench::Result;
using bench::Status;
using bench::UsageError;

struct Options {
  std::vector<std::string> variants, shapes;
  bench::Settings settings;
  int device = 0;
  bool device_given = false, csv_given = false, json_given = false, auto_table_given = false;
  std::string csv, json, auto_table;
  std::vector<std::string> from_json;
  std::vector<std::string> timing_flags_given;  // flags that --from-json, timing nothing, refuses
  bool list = false;
};

void print_variants() {
  std::printf("%-14s %-7s %-5s %s\n", "variant", "memory", "prec", "summary");
  for (const gemm::Variant& v : gemm::variants())
    std::printf("%-14s %-7s %-5s %s\n", v.name, v.device == gemm::Device::CUDA ? "device" : "host",
                bench::precision_name(v.precision), v.summary);
}

// The variants asked for by name (default: every device variant), in the order given; nullptr
// for a single host variant, which is timed on its own.
std::vector<const gemm::Variant*> chosen_variants(const std::vector<std::string>& names) {
  std::vector<const gemm::Variant*> chosen;
  if (names.empty()) {
    for (const gemm::Variant& v : gemm::variants())
      if (v.device == gemm::Device::CUDA) chosen.push_back(&v);
    return chosen;
  }
  for (const std::string& name : names) {
    const gemm::Variant* v;
    try {
      v = &gemm::find_variant(name);
    } catch (const gemm::Error& e) {
      throw UsageError(e.what());
    }
    if (v->device != gemm::Device::CUDA && names.size() > 1)
      throw UsageError("variant '" + name + "' runs on the host: time it on its own (--variants " +
                       name + ")");
    if (std::find(chosen.begin(), chosen.end(), v) == chosen.end()) chosen.push_back(v);
  }
  return chosen;
}

// Timing order: the cuBLAS baselines first (the percentages need them), cuBLAS TF32 only beside
// a TF32 variant, then the chosen ones. A variant this GPU cannot run (wgmma off Hopper) is an
// error when asked for by name, a notice when it came with the default list.
std::vector<const gemm::Variant*> timing_order(const std::vector<const gemm::Variant*>& chosen,
                                               bool asked_by_name) {
  std::vector<const gemm::Variant*> order = {&gemm::find_variant("cublas")};
  const bool any_tf32 = std::any_of(chosen.begin(), chosen.end(), [](const gemm::Variant* v) {
    return v->precision == gemm::Precision::TF32;
  });
  if (any_tf32) order.push_back(&gemm::find_variant("cublas_tf32"));
  for (const gemm::Variant* v : chosen)
    if (std::find(order.begin(), order.end(), v) == order.end()) order.push_back(v);
  for (auto it = order.begin(); it != order.end();) {
    if (const char* why = gemm::unavailable_reason(**it)) {
      if (asked_by_name) throw UsageError(why);
      std::printf("skipped: %s\n", why);
      it = order.erase(it);
    } else {
      ++it;
    }
  }
  return order;
}

// The percentages of cuBLAS, then the results in the variant table's order.
std::vector<Result> table_order(std::map<std::string, Result>& by_name) {
  const auto median = [&](const char* name) {
    return by_name.count(name) ? by_name[name].timing.median_ms : NAN;
  };
  const double base = median("cublas"), base_tf32 = median("cublas_tf32");
  std::vector<Result> out;
  for (const gemm::Variant& v : gemm::variants()) {
    if (!by_name.count(v.name)) continue;
    Result& r = by_name[v.name];
    r.pct_cublas = 100.0 * base / r.timing.median_ms;
    if (r.precision == gemm::Precision::TF32)
      r.pct_cublas_tf32 = 100.0 * base_tf32 / r.timing.median_ms;
    out.push_back(r);
  }
  return out;
}

// Every shape's memory (bytes_of), checked against `limit` before any case runs; `where` is
// "the cpu variant (…)" or "the GPU (…)". Too big a shape is bad usage: exit status 2.
void check_case_memory(const std::vector<bench::Shape>& shapes, const gemm_mlp::MemoryLimit& limit,
                       const std::string& where, std::uint64_t (*bytes_of)(const bench::Shape&)) {
  try {
    for (const bench::Shape& s : shapes)
      gemm_mlp::check_allocation(bytes_of(s), limit,
                                 "--shapes " + s.text() + ":" + s.layout() + " on " + where);
  } catch (const gemm_mlp::Error& e) {
    throw UsageError(e.what());
  }
}

// Writes --auto-table; false (the shapes named on stderr) when a shape got no line.
bool write_auto_table_file(const std::string& path, const std::string& device,
                           const std::vector<Result>& results,
                           const std::vector<std::string>& sources = {}) {
  const std::vector<std::string> without = bench::write_auto_table(path, device, results, sources);
  if (without.empty()) return true;
  std::fprintf(stderr, "gemm_bench: --auto-table %s has no line for", path.c_str());
  for (const std::string& s : without) std::fprintf(stderr, " %s", s.c_str());
  std::fprintf(stderr,
               ": no fp32 kernel of this project was timed there (each failed, was skipped or "
               "was not run)\n");
  return false;
}

// --from-json: the table from earlier runs, nothing timed.
int run_from_json(const Options& o) {
  if (!o.timing_flags_given.empty())
    throw UsageError("--from-json writes --auto-table from earlier runs and times nothing: drop " +
                     o.timing_flags_given.front());
  if (!o.auto_table_given)
    throw UsageError("--from-json reads earlier runs for --auto-table: give --auto-table FILE");
  bench::check_output_path(o.auto_table, "--auto-table");
  std::vector<bench::MeasuredRun> runs;
  for (const std::string& path : o.from_json) runs.push_back(bench::read_results_json(path));
  const std::vector<Result> merged = bench::merge_runs(runs);
  const bool complete =
      write_auto_table_file(o.auto_table, runs.front().device, merged, o.from_json);
  std::printf("gemm_bench: wrote %s from %zu results of %zu runs on %s\n", o.auto_table.c_str(),
              merged.size(), runs.size(), runs.front().device.c_str());
  return complete ? 0 : 1;
}

int run_host(const Options& o) {
  if (o.device_given)
    throw UsageError("--device picks a GPU, but --variants cpu runs on the host: drop --device");
  if (!o.auto_table.empty())
    throw UsageError(
        "--auto-table records the device kernels the `auto` variant chooses from; --variants cpu "
        "times none of them: drop --auto-table, or time device variants");
  const std::vector<bench::Shape> shapes =
      bench::parse_shapes(o.shapes, bench::default_host_shapes());
  check_case_memory(shapes, gemm_mlp::host_memory_limit(), "the cpu variant (A, B and C in fp32)",
                    bench::host_case_bytes);
  return bench::run_host_bench(shapes, o.settings, o.csv, o.json);
}

int run_bench(const Options& o) {
  const std::vector<const gemm::Variant*> chosen = chosen_variants(o.variants);
  if (o.csv_given) bench::check_output_path(o.csv, "--csv");
  if (o.json_given) bench::check_output_path(o.json, "--json");
  if (o.auto_table_given) bench::check_output_path(o.auto_table, "--auto-table");
  if (chosen.size() == 1 && chosen[0]->device == gemm::Device::CPU) return run_host(o);
  if (o.auto_table_given && std::none_of(chosen.begin(), chosen.end(), [](const gemm::Variant* v) {
        return bench::auto_candidate(*v);
      }))
    throw UsageError(
        "--auto-table records the fastest fp32 kernel of this project per shape, but --variants "
        "names none (cuBLAS, TF32 kernels and auto are not candidates)");
  const std::vector<bench::Shape> shapes = bench::parse_shapes(o.shapes, bench::default_shapes());

  const bench::DeviceInfo info = bench::select_device(o.device);
  bench::print_device(info);
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  bench::Timer timer(stream);
  // Cases run one after another, each freeing its buffers: the free memory now bounds each.
  check_case_memory(shapes, gemm_mlp::device_memory_limit(),
                    "the GPU (inputs, outputs, reference and error scale in fp32)",
                    bench::DeviceCase::bytes_needed);
  const bench::Settings& set = o.settings;
  std::printf(
      "method: validate vs cuBLAS fp32, %d warm-up + %d timed runs (CUDA events), median;"
      " L2 flushed (%.0f MiB written) and C poisoned before every run; alpha=1, beta=0;"
      " cap %.0f s per case\n\n",
      set.warmup, set.reps, timer.flush_bytes() / 1048576.0, set.max_seconds);
  const std::vector<const gemm::Variant*> order = timing_order(chosen, !o.variants.empty());

  std::vector<Result> all;
  bool context_lost = false;
  bench::print_table_header();
  for (const bench::Shape& s : shapes) {
    std::map<std::string, Result> by_name;
    {
      bench::DeviceCase device_case(s, set, timer);
      for (const gemm::Variant* v : order) {
        const Result r = device_case.measure(*v);
        by_name[v->name] = r;
        if (r.status != Status::Failed) continue;
        // A kernel fault kills the context: then nothing more can be measured.
        cudaGetLastError();
        if (cudaDeviceSynchronize() != cudaSuccess) {
          context_lost = true;
          break;
        }
      }
    }
    for (const Result& r : table_order(by_name)) {
      bench::print_table_row(r);
      all.push_back(r);
    }
    std::printf("\n");
    std::fflush(stdout);
    if (context_lost) {
      std::fprintf(stderr,
                   "gemm_bench: the CUDA context was lost after a kernel fault; stopping\n");
      break;
    }
  }
  cudaStreamDestroy(stream);

  if (!o.csv.empty()) bench::write_csv(o.csv, info, all);
  if (!o.json.empty())
    bench::write_json(o.json, info, {set, timer.flush_bytes(), bench::kDeviceTiming}, all);
  bool table_incomplete = false;
  if (!o.auto_table.empty())
    table_incomplete = !write_auto_table_file(o.auto_table, info.name, all);
  bool invalid = false;
  for (const Result& r : all) {
    if (r.status != Status::Failed) continue;
    if (!invalid) std::fprintf(stderr, "gemm_bench: FAILED validation:");
    invalid = true;
    std::fprintf(stderr, " %s@%s:%s", r.variant.c_str(), r.shape.text().c_str(),
                 r.shape.layout().c_str());
  }
  if (invalid) std::fprintf(stderr, "\n");
  return table_incomplete || invalid ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "gemm_bench: validates every device GEMM variant against cuBLAS, then times it (CUDA events, "
      "L2 flushed and C poisoned before each run, median of --reps runs) beside cuBLAS fp32 (TF32 "
      "off) and, for TF32 variants, cuBLAS TF32. Exit status: 0 ok, 1 a variant failed "
      "validation, 2 bad usage or no GPU."};
  Options o;
  bench::Settings& set = o.settings;
  app.add_option("--variants", o.variants,
                 "Comma-separated device variants to time (default: every device variant). "
                 "cuBLAS fp32 is always timed, cuBLAS TF32 beside any TF32 variant. "
                 "--variants cpu times the host variant alone, without a GPU (default shapes "
                 "256, 512, 1024)")
      ->delimiter(',');
  app.add_option("--shapes", o.shapes,
                 "Comma-separated shapes: N (square N^3, layout NN), MxNxK (NN) or MxNxK:LAYOUT, "
                 "LAYOUT in NN,NT,TN,TT (default: squares 256..8192 NN, and the MLP's "
                 "256x1024x784:NT, 256x784x1024:NN, 1024x784x256:TN, 256x10x1024:NT)")
      ->delimiter(',');
  // Numbers are decimal, finite and in range (apps/common/number_flags.h).
  app.add_option("--reps", set.reps, "Timed runs per case, 20 .. 100000")
      ->transform(apps::decimal_integer(20, 100000))
      ->capture_default_str();
  app.add_option("--warmup", set.warmup, "Untimed warm-up runs per case, 1 .. 1000")
      ->transform(apps::decimal_integer(1, 1000))
      ->capture_default_str();
  app.add_option("--max-seconds-per-case", set.max_seconds,
                 "Time cap per shape and variant, in (0, 86400] s: a slower case runs fewer reps "
                 "(at least 3), marked 'capped'")
      ->transform(apps::finite_number(0, 86400, true))
      ->capture_default_str();
  app.add_flag("--skip-slow", set.skip_slow,
               "Skip a case that would exceed --max-seconds-per-case instead of capping its reps");
  app.add_option("--csv", o.csv, "Write the results as CSV to this file");
  app.add_option("--json", o.json, "Write the results, device and method as JSON to this file");
  app.add_option("--auto-table", o.auto_table,
                 "Write the table the `auto` variant chooses from (kernels/auto_table.inc): the "
                 "fastest correct fp32 kernel of this project per measured shape and layout "
                 "(device variants only)");
  app.add_option("--from-json", o.from_json,
                 "Comma-separated --json files of earlier runs on one GPU: time nothing, write "
                 "--auto-table from their results (a shape measured again in a later file takes "
                 "that file's results)")
      ->delimiter(',');
  app.add_option("--seed", set.seed, "Seed of the random inputs, 0 .. 2^64-1")
      ->transform(apps::decimal_unsigned())
      ->capture_default_str();
  CLI::Option* device = app.add_option("--device", o.device,
                                       "CUDA device index, below the number of devices (device "
                                       "variants only)")
                            ->transform(apps::decimal_integer(0, 1023))
                            ->capture_default_str();
  app.add_flag("--list", o.list, "List the variants (name, memory, precision, summary) and exit");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  o.device_given = device->count() > 0;
  o.csv_given = app.count("--csv") > 0;
  o.json_given = app.count("--json") > 0;
  o.auto_table_given = app.count("--auto-table") > 0;
  for (const char* flag : {"--variants", "--shapes", "--csv", "--json", "--device", "--reps",
                           "--warmup", "--max-seconds-per-case", "--skip-slow", "--seed"})
    if (app.count(flag) > 0) o.timing_flags_given.push_back(flag);
  if (o.list) {
    print_variants();
    return 0;
  }
  try {
    return o.from_json.empty() ? run_bench(o) : run_from_json(o);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "gemm_bench: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemm_bench: error: %s\n", e.what());
    return 1;
  }
}
