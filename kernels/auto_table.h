// The table the `auto` variant chooses from, and its choice (auto.cpp). Internal to kernels/ and
// its tests: the table is kernels/auto_table.inc, written by `gemm_bench --from-json RUNS
// --auto-table` (apps/gemm_bench/auto_table.h) from the GPU runs its "// From:" line names.
#pragma once

#include <string>
#include <vector>

#include "kernels/gemm.h"

namespace gemm::detail {

struct AutoEntry {
  const char* device;  // cudaDeviceProp::name
  const char* layout;  // "NN", "NT", "TN" or "TT"
  int m, n, k;
  const char* variant;  // the fastest correct fp32 kernel of this project measured at M×N×K
};

// The variant auto takes where the table has no entry for the GPU and layout: the production
// fp32 kernel, which adapts its tile to the problem and runs on every GPU.
constexpr const char* kAutoFallback = "fast";

// kernels/auto_table.inc, in its order.
const std::vector<AutoEntry>& auto_table();

// The variant auto runs for p on the GPU named `device`: among the entries of `table` for that
// device and p's layout, the one whose shape is nearest p's in log space (|log2(M'/M)| +
// |log2(N'/N)| + |log2(K'/K)|, so a factor of 2 in any dimension counts the same), the first
// of equals in table order; kAutoFallback when there is none. A measured shape picks its own
// entry; between measured shapes auto takes the nearest one's kernel, which has not been timed at
// p itself.
const char* auto_choice(const std::vector<AutoEntry>& table, const std::string& device,
                        const Problem& p);

}  // namespace gemm::detail
