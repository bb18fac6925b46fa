#include "apps/gemm_bench/device_info.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdio>

#include "apps/bench_common/shapes.h"
#include "base/cuda_check.h"
#include "kernels/gemm.h"

namespace bench {

DeviceInfo select_device(int device) {
  if (!gemm::cuda_device_available()) {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    cudaGetLastError();
    throw UsageError(std::string("no NVIDIA driver or GPU found (cudaGetDeviceCount: ") +
                     (err == cudaSuccess ? "0 devices" : cudaGetErrorString(err)) +
                     "); the device variants need a GPU: --variants cpu times the host variant "
                     "without one");
  }
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  if (device < 0 || device >= count)
    throw UsageError("--device " + std::to_string(device) + " out of range: this machine has " +
                     std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s") +
                     " (indices 0 .. " + std::to_string(count - 1) + ")");
  CUDA_CHECK(cudaSetDevice(device));

  DeviceInfo d;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  d.name = prop.name;
  d.sms = prop.multiProcessorCount;
  d.cc_major = prop.major, d.cc_minor = prop.minor;
  d.l2_bytes = prop.l2CacheSize;
  d.mem_bytes = static_cast<long long>(prop.totalGlobalMem);
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) == cudaSuccess)
    d.clock_mhz = khz / 1000;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device) == cudaSuccess)
    d.mem_clock_mhz = khz / 1000;
  cudaGetLastError();  // an attribute this driver lacks is left at 0
  CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime));
  CUDA_CHECK(cudaDriverGetVersion(&d.driver));
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
    d.cublas = major * 10000 + minor * 100 + patch;
  return d;
}

DeviceInfo host_info() {
  DeviceInfo d;
  d.host = true;
  d.name = "host CPU (OpenBLAS)";
  return d;
}

std::string version_text(int cuda_version) {
  return std::to_string(cuda_version / 1000) + "." + std::to_string((cuda_version % 1000) / 10);
}

void print_device(const DeviceInfo& d) {
  std::printf("device: %s (sm_%d%d, %d SMs, %d MHz max clock, %d MHz memory clock, L2 %.0f MiB)\n",
              d.name.c_str(), d.cc_major, d.cc_minor, d.sms, d.clock_mhz, d.mem_clock_mhz,
              d.l2_bytes / 1048576.0);
  std::printf("CUDA runtime %s, driver %s, cuBLAS %d.%d.%d\n", version_text(d.runtime).c_str(),
              version_text(d.driver).c_str(), d.cublas / 10000, d.cublas / 100 % 100,
              d.cublas % 100);
}

}  // namespace bench
