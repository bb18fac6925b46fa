// The GPU gemm_bench runs on, and the CUDA and cuBLAS versions, for the table and the JSON.
#pragma once

#include <string>

namespace bench {

struct DeviceInfo {
  bool host = false;  // --variants cpu: only the name is known
  std::string name;
  int sms = 0, clock_mhz = 0, mem_clock_mhz = 0, cc_major = 0, cc_minor = 0;
  long long l2_bytes = 0, mem_bytes = 0;
  int runtime = 0, driver = 0;  // CUDA versions as 1000·major + 10·minor
  int cublas = 0;               // 10000·major + 100·minor + patch
};

// Makes `device` current and describes it; throws UsageError without a GPU (suggesting
// --variants cpu) or for an index out of range (naming the number of devices).
DeviceInfo select_device(int device);

// The host's stand-in, for --variants cpu.
DeviceInfo host_info();

// "13.0" for 13000.
std::string version_text(int cuda_version);

// Two lines: the device, then the versions.
void print_device(const DeviceInfo& d);

}  // namespace bench
