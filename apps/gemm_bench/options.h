// gemm_bench's command line: its options, and the parse that fills them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "apps/gemm_bench/result.h"

namespace bench {

// What the command line asks for.
struct Options {
  std::vector<std::string> variants, shapes;
  bench::Settings settings;
  int device = 0;
  bool device_given = false, csv_given = false, json_given = false, auto_table_given = false;
  std::string csv, json, auto_table;
  std::vector<std::string> from_json;
  std::vector<std::string> timing_flags_given;  // flags that --from-json, timing nothing, refuses
  bool list = false;
  bool phases = false;  // --phases (phases.h)
};

// Fills `o` from the command line. Returns the exit status when the program is to stop here
// (--help: 0; a parse error, printed: 2), else nothing.
std::optional<int> parse_options(int argc, char** argv, Options& o);

}  // namespace bench
