// gemm_bench: times the device GEMM variants against cuBLAS, after validating each one.
//
//   gemm_bench                                   every device variant, the default shapes
//   gemm_bench --variants naive,vec --shapes 4096,256x1024x784:NT --csv out.csv
//   gemm_bench --variants cpu                    the host variant, without a GPU (--csv and --json
//                                                work; --auto-table and --device do not apply)
//   gemm_bench --list
//   gemm_bench --from-json a.json,b.json --auto-table kernels/auto_table.inc
//                                                the `auto` table from earlier runs' --json files
//                                                (each GPU its own lines), timing nothing
//   gemm_bench --phases --csv phases.csv         where each kernel's time goes (phases.h; a build
//                                                with -DGEMM_MLP_PHASE_TIMES=ON)
//
// Per shape (device_case.h): the variant is validated against cuBLAS fp32 on the same inputs,
// then timed (timing.h: CUDA events per run, L2 flushed and C poisoned before each, median of
// --reps), and timed warm as a training step runs it (--warm-calls back-to-back calls in one CUDA
// graph, the operands warm in L2, median of --warm-replays replays, per call). cuBLAS fp32 is
// always timed on the same shape, and cuBLAS TF32 beside any TF32 variant. A failing variant is
// reported FAILED and makes the exit status 1.
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
// host_bench (--variants cpu), report (table, CSV, JSON), auto_table (--auto-table), phases
// (--phases), options (the command line), run (the variants, their order and the run), this one
// (main).
#include <cstdio>
#include <exception>
#include <optional>

#include "apps/gemm_bench/options.h"
#include "apps/gemm_bench/phases.h"
#include "apps/gemm_bench/run.h"
#include "base/openblas_threads.h"

GEMM_MLP_ONE_OPENBLAS_THREAD_UNDER_ADDRESS_LIMIT;

int main(int argc, char** argv) {
  bench::Options o;
  if (const std::optional<int> status = bench::parse_options(argc, argv, o)) return *status;
  if (o.list) {
    bench::print_variants();
    return 0;
  }
  try {
    if (o.phases) return bench::run_phases(o);
    return o.from_json.empty() ? bench::run_bench(o) : bench::run_from_json(o);
  } catch (const bench::UsageError& e) {
    std::fprintf(stderr, "gemm_bench: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemm_bench: error: %s\n", e.what());
    return 1;
  }
}
