// --auto-table: writes the table the `auto` variant chooses from (kernels/auto_table.inc, C++
// source read by kernels/auto.cpp through kernels/auto_table.h): for each measured shape and
// layout, the fastest of this project's fp32 kernels that passed validation and was timed. cuBLAS,
// TF32 kernels and auto itself are not candidates. The medians compared are the warm ones (back to
// back in one graph, as a training step runs them) where every candidate of the shape was timed
// warm, else the flushed ones. Medians within kAutoTieMargin of the fastest count as a tie, which
// goes to the variant first in the registry's order. The results are this run's, or (--from-json)
// those of earlier runs, read back from their --json files: on one GPU or several, each GPU's
// lines its own (auto looks up the GPU it runs on).
#pragma once

#include <string>
#include <vector>

#include "apps/gemm_bench/result.h"

namespace bench {

// Launches of about 5 µs time up to 4% apart from one run to the next (the same kernel at
// 128×512×10 NN: 5.22 µs in one H200 run, 4.90 in the next), so a smaller difference does not rank
// two kernels. A tie goes to the variant listed first (dispatch.cpp), so that the table does not
// flip on noise from run to run.
constexpr double kAutoTieMargin = 0.05;

// Whether `auto` may choose v: a device fp32 kernel of this project (not cuBLAS, not auto).
bool auto_candidate(const gemm::Variant& v);

// One earlier run, as its --json file records it.
struct MeasuredRun {
  std::string path, device;
  std::vector<Result> results;
};

// Reads a gemm_bench --json file (shape, layout, variant, status and median of each result);
// throws UsageError naming the file and what is wrong: unreadable, not JSON, a field missing or
// of the wrong type, a bad shape, an unknown status, or a variant this build does not have.
MeasuredRun read_results_json(const std::string& path);

// One GPU's results.
struct DeviceResults {
  std::string device;
  std::vector<Result> results;
};

// The runs' results, one set per GPU in the order the runs first name it: where a later run on the
// same GPU measured a shape and layout again, its results replace the earlier runs' there, so that
// the kernels at one shape are compared within one run.
std::vector<DeviceResults> merge_runs(const std::vector<MeasuredRun>& runs);

// Writes the table: for each GPU in turn, one line per shape and layout that has a candidate,
// ordered by layout, M, N, K. `sources` names the --json files it was read from
// (--from-json; their file names only, in a "// From:" line, so that the table can be checked
// against the same files committed elsewhere), or is empty for this run's results. Returns the
// shapes ("256x1024x784:NT", followed by " on <GPU>" where the table has several GPUs) that have
// no candidate (every fp32 kernel failed, was skipped or was
// not run there), which get no line. The file is written whole or not at all
// (engine::replace_file); throws gemm_mlp::Error naming it and the system's reason.
std::vector<std::string> write_auto_table(const std::string& path,
                                          const std::vector<DeviceResults>& devices,
                                          const std::vector<std::string>& sources = {});

}  // namespace bench
