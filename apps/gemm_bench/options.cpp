// gemm_bench's command line (options.h).
#include "apps/gemm_bench/options.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

#include "apps/common/number_flags.h"
#include "apps/common/strict_flags.h"

namespace bench {

std::optional<int> parse_options(int argc, char** argv, Options& o) {
  CLI::App app{
      "gemm_bench: validates every device GEMM variant against cuBLAS, then times it (CUDA events, "
      "L2 flushed and C poisoned before each run, median of --reps runs) beside cuBLAS fp32 (TF32 "
      "off) and, for TF32 variants, cuBLAS TF32. Exit status: 0 ok, 1 a variant failed "
      "validation, 2 bad usage or no GPU."};
  Settings& set = o.settings;
  app.add_option("--variants", o.variants,
                 "Comma-separated device variants to time (default: every device variant). "
                 "cuBLAS fp32 is always timed, cuBLAS TF32 beside any TF32 variant. "
                 "--variants cpu times the host variant alone, without a GPU (default shapes "
                 "256, 512, 1024)");
  app.add_option("--shapes", o.shapes,
                 "Comma-separated shapes: N (square N^3, layout NN), MxNxK (NN) or MxNxK:LAYOUT, "
                 "LAYOUT in NN,NT,TN,TT (default: squares 256..8192 NN, and the MLP's "
                 "256x1024x784:NT, 256x784x1024:NN, 1024x784x256:TN, 256x10x1024:NT)");
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
  app.add_option("--warm-calls", set.warm_calls,
                 "Also time each case warm, as a training step runs it: this many back-to-back "
                 "calls in one CUDA graph, operands warm in L2, 0 .. 1000 (0: flushed timing only)")
      ->transform(apps::decimal_integer(0, 1000))
      ->capture_default_str();
  app.add_option("--warm-replays", set.warm_replays,
                 "Timed replays of the warm graph per case (median, per call), 3 .. 10000")
      ->transform(apps::decimal_integer(3, 10000))
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
                 "Comma-separated --json files of earlier runs: time nothing, write "
                 "--auto-table from their results, each GPU's lines from its own runs (a shape "
                 "measured again in a later file of the same GPU takes that file's results)");
  app.add_option("--seed", set.seed, "Seed of the random inputs, 0 .. 2^64-1")
      ->transform(apps::decimal_unsigned())
      ->capture_default_str();
  CLI::Option* device = app.add_option("--device", o.device,
                                       "CUDA device index, below the number of devices (device "
                                       "variants only)")
                            ->transform(apps::decimal_integer(0, 1023))
                            ->capture_default_str();
  app.add_flag("--phases", o.phases,
               "Where each kernel's time goes, from in-kernel timestamps (a build configured with "
               "-DGEMM_MLP_PHASE_TIMES=ON): --warm-calls calls in one graph, the table per "
               "kernel (default variants tf32_fast,tf32x3_fast; default shapes the default "
               "model's GEMMs); --csv writes it");
  app.add_flag("--list", o.list, "List the variants (name, memory, precision, summary) and exit");

  if (const std::optional<std::string> why = apps::switch_given_a_value(app, argc, argv)) {
    std::fprintf(stderr, "gemm_bench: error: %s\n", why->c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
    // Comma-separated, an empty item an error (CLI11's ->delimiter drops it).
    o.variants = apps::comma_list("--variants", o.variants);
    o.shapes = apps::comma_list("--shapes", o.shapes);
    o.from_json = apps::comma_list("--from-json", o.from_json);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "gemm_bench: error: %s\n", e.what());
    return 2;
  }
  o.device_given = device->count() > 0;
  o.csv_given = app.count("--csv") > 0;
  o.json_given = app.count("--json") > 0;
  o.auto_table_given = app.count("--auto-table") > 0;
  for (const char* flag :
       {"--variants", "--shapes", "--csv", "--json", "--device", "--reps", "--warmup",
        "--max-seconds-per-case", "--skip-slow", "--seed", "--warm-calls", "--warm-replays"})
    if (app.count(flag) > 0) o.timing_flags_given.push_back(flag);
  return std::nullopt;
}

}  // namespace bench
