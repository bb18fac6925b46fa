// --variants cpu: the host variant (OpenBLAS), timed on its own, without a GPU.
//
// Inputs are random in [-1, 1], C poisoned with NaN. 64 sampled elements are checked against
// double-precision dot products with the variant's tolerance (gemm::tolerance) before timing;
// then --warmup untimed and --reps timed runs, each timed by a steady clock around the call,
// summarised as the GPU runs are (timing.h); --max-seconds-per-case caps the reps (at least 3).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/gemm_bench/result.h"

namespace bench {

// Prints the table, writes the CSV and the JSON when their paths are not empty; 1 when the check
// failed, else 0.
int run_host_bench(const std::vector<Shape>& shapes, const Settings& settings,
                   const std::string& csv, const std::string& json);

// The host memory a case of this shape takes: A, B and C in fp32.
std::uint64_t host_case_bytes(const Shape& shape);

}  // namespace bench
