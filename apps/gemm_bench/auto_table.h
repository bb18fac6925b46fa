// --auto-table: writes the table the `auto` variant chooses from (kernels/auto_table.inc, C++
// source included by kernels/auto.cpp): for each measured shape and layout, the fastest of this
// project's fp32 kernels that passed validation. cuBLAS, TF32 kernels and auto itself are not
// candidates.
#pragma once

#include <string>
#include <vector>

#include "apps/gemm_bench/device_info.h"
#include "apps/gemm_bench/result.h"

namespace bench {

// Throws UsageError when the file cannot be written.
void write_auto_table(const std::string& path, const DeviceInfo& d,
                      const std::vector<Result>& results);

}  // namespace bench
