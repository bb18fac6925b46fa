// gemm_bench's output: the table on stdout, and the results as CSV (--csv) and JSON (--json).
// The CSV and JSON fields are what scripts/docs/bench_to_docs.py, readme_tables.py and
// plot_bench.py read; a number missing (NaN) is written as null in both.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "apps/gemm_bench/device_info.h"
#include "apps/gemm_bench/result.h"

namespace bench {

// x with `decimals` decimals, or `missing` when it is not finite.
std::string fixed_text(double x, int decimals, const char* missing = "-");

// The device table: one header, then one row per result.
void print_table_header();
void print_table_row(const Result& r);

// The host variant's table (no cuBLAS columns, GFLOP/s).
void print_host_table_header();
void print_host_table_row(const Result& r);

// How a run is timed, as the JSON's method.timing says it.
constexpr const char* kDeviceTiming = "CUDA events per run, median of reps";
constexpr const char* kWarmTiming =
    "back-to-back calls in one CUDA graph, operands warm in L2, median of replays, per call";
constexpr const char* kHostTiming = "steady clock around each run, median of reps";

// The method as the JSON records it.
struct Method {
  const Settings& settings;
  std::size_t l2_flush_bytes;  // 0 on the host: no flush
  const char* timing;
  bool warm = false;  // timed warm too (device runs with --warm-calls above 0)
};

// Before a run: throws UsageError when `path` (given to `option`, e.g. "--json") could not be
// written as the run's end writes it (apps::require_writable: a blank name, a folder, something
// other than a regular file such as a FIFO or a device, a folder that is missing or not writable,
// a name too long for the file system), so that a long run does not end unable to write its
// results, or hang writing them. Nothing is created or changed.
void check_output_path(const std::string& path, const char* option);

// Both write the file whole or not at all (engine::replace_file: a new version beside the old one,
// renamed over it), so that a failed write (a full disk) leaves the old file as it was; they throw
// gemm_mlp::Error naming the file and the system's reason.
void write_csv(const std::string& path, const DeviceInfo& d, const std::vector<Result>& results);
void write_json(const std::string& path, const DeviceInfo& d, const Method& method,
                const std::vector<Result>& results);

}  // namespace bench
