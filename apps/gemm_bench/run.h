// gemm_bench's runs: the device variants validated and timed on every shape (run_bench), the
// host variant alone (inside run_bench), and the `auto` table from earlier runs (run_from_json).
#pragma once

#include "apps/gemm_bench/options.h"

namespace bench {

// Lists the variants (name, memory, precision, summary): --list.
void print_variants();

// The run the options ask for; returns the exit status (1 when a variant failed validation or the
// --auto-table misses a shape). Throws UsageError for bad usage.
int run_bench(const Options& o);

// --from-json: the table from earlier runs, nothing timed; returns the exit status.
int run_from_json(const Options& o);

}  // namespace bench
