// gemm_bench's runs (run.h): the variants chosen and ordered, each shape's cases measured and
// reported, the files written.
#include "apps/gemm_bench/run.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "apps/gemm_bench/auto_table.h"
#include "apps/gemm_bench/device_case.h"
#include "apps/gemm_bench/device_info.h"
#include "apps/gemm_bench/host_bench.h"
#include "apps/gemm_bench/report.h"
#include "base/cuda_check.h"
#include "base/memory_limit.h"
#include "kernels/gemm.h"

namespace bench {

void print_variants() {
  std::printf("%-14s %-7s %-5s %s\n", "variant", "memory", "prec", "summary");
  for (const gemm::Variant& v : gemm::variants())
    std::printf("%-14s %-7s %-5s %s\n", v.name, v.device == gemm::Device::CUDA ? "device" : "host",
                bench::precision_name(v.precision), v.summary);
}

namespace {

// The variants asked for by name (default: every device variant), in the order given; nullptr
// for a single host variant, which is timed on its own.
std::vector<const gemm::Variant*> chosen_variants(const std::vector<std::string>& names) {
  std::vector<const gemm::Variant*> chosen;
  if (names.empty()) {
    for (const gemm::Variant& v : gemm::variants())
      if (v.device == gemm::Device::CUDA) chosen.push_back(&v);
    return chosen;
  }
  for (auto it = names.begin(); it != names.end(); ++it)
    if (std::find(names.begin(), it, *it) != it)
      throw UsageError("--variants names '" + *it + "' twice: name each variant once");
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
    chosen.push_back(v);
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
  const auto warm = [&](const char* name) {
    return by_name.count(name) ? by_name[name].warm.median_ms : NAN;
  };
  const double base = median("cublas"), base_tf32 = median("cublas_tf32");
  const double warm_base = warm("cublas"), warm_base_tf32 = warm("cublas_tf32");
  std::vector<Result> out;
  for (const gemm::Variant& v : gemm::variants()) {
    if (!by_name.count(v.name)) continue;
    Result& r = by_name[v.name];
    r.pct_cublas = 100.0 * base / r.timing.median_ms;
    r.warm_pct_cublas = 100.0 * warm_base / r.warm.median_ms;
    if (r.precision == gemm::Precision::TF32) {
      r.pct_cublas_tf32 = 100.0 * base_tf32 / r.timing.median_ms;
      r.warm_pct_cublas_tf32 = 100.0 * warm_base_tf32 / r.warm.median_ms;
    }
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
bool write_auto_table_file(const std::string& path,
                           const std::vector<bench::DeviceResults>& devices,
                           const std::vector<std::string>& sources = {}) {
  const std::vector<std::string> without = bench::write_auto_table(path, devices, sources);
  if (without.empty()) return true;
  std::fprintf(stderr, "gemm_bench: --auto-table %s has no line for", path.c_str());
  for (const std::string& s : without) std::fprintf(stderr, " %s", s.c_str());
  std::fprintf(stderr,
               ": no fp32 kernel of this project was timed there (each failed, was skipped or "
               "was not run)\n");
  return false;
}

int run_host(const Options& o) {
  if (o.device_given)
    throw UsageError("--device picks a GPU, but --variants cpu runs on the host: drop --device");
  for (const char* flag : {"--warm-calls", "--warm-replays"})
    if (std::find(o.timing_flags_given.begin(), o.timing_flags_given.end(), std::string(flag)) !=
        o.timing_flags_given.end())
      throw UsageError(std::string(flag) +
                       " times device variants in a CUDA graph; --variants cpu runs on the host: "
                       "drop " +
                       flag);
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

// Validates and times every variant of `order` on every shape, printing the table as it goes;
// the results in table order. A kernel fault that loses the CUDA context stops the run there.
std::vector<Result> measure_shapes(const std::vector<Shape>& shapes,
                                   const std::vector<const gemm::Variant*>& order,
                                   const Settings& set, Timer& timer) {
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
  return all;
}

}  // namespace

int run_from_json(const Options& o) {
  if (!o.timing_flags_given.empty())
    throw UsageError("--from-json writes --auto-table from earlier runs and times nothing: drop " +
                     o.timing_flags_given.front());
  if (!o.auto_table_given)
    throw UsageError("--from-json reads earlier runs for --auto-table: give --auto-table FILE");
  bench::check_output_path(o.auto_table, "--auto-table");
  std::vector<bench::MeasuredRun> runs;
  for (const std::string& path : o.from_json) runs.push_back(bench::read_results_json(path));
  const std::vector<bench::DeviceResults> devices = bench::merge_runs(runs);
  const bool complete = write_auto_table_file(o.auto_table, devices, o.from_json);
  std::size_t results = 0;
  std::string names;
  for (const bench::DeviceResults& d : devices)
    results += d.results.size(), names += (names.empty() ? "" : ", ") + d.device;
  std::printf("gemm_bench: wrote %s from %zu results of %zu runs on %s\n", o.auto_table.c_str(),
              results, runs.size(), names.c_str());
  return complete ? 0 : 1;
}

int run_bench(const Options& o) {
  const std::vector<const gemm::Variant*> chosen = chosen_variants(o.variants);
  if (o.csv_given) bench::check_output_path(o.csv, "--csv");
  if (o.json_given) bench::check_output_path(o.json, "--json");
  if (o.csv_given && o.json_given &&
      std::filesystem::weakly_canonical(std::filesystem::absolute(o.csv)) ==
          std::filesystem::weakly_canonical(std::filesystem::absolute(o.json)))
    throw UsageError("--csv '" + o.csv + "' and --json '" + o.json +
                     "' are the same file: each would overwrite the other");
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
      " cap %.0f s per case\n",
      set.warmup, set.reps, timer.flush_bytes() / 1048576.0, set.max_seconds);
  if (set.warm_calls > 0)
    std::printf(
        "warm: %d back-to-back calls in one CUDA graph, operands warm in L2, median of %d "
        "replays, us per call\n",
        set.warm_calls, set.warm_replays);
  std::printf("\n");
  const std::vector<const gemm::Variant*> order = timing_order(chosen, !o.variants.empty());

  const std::vector<Result> all = measure_shapes(shapes, order, set, timer);
  cudaStreamDestroy(stream);

  if (!o.csv.empty()) bench::write_csv(o.csv, info, all);
  if (!o.json.empty())
    bench::write_json(o.json, info,
                      {set, timer.flush_bytes(), bench::kDeviceTiming, set.warm_calls > 0}, all);
  bool table_incomplete = false;
  if (!o.auto_table.empty())
    table_incomplete = !write_auto_table_file(o.auto_table, {{info.name, all}});
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

}  // namespace bench
