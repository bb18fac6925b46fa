// The host side of the in-kernel phase timestamps (gemm.h, gemm::phase_times; the device side is
// phase_times.cuh).
#include <mutex>
#include <vector>

#include "base/device_buffer.h"
#include "kernels/gemm.h"

namespace gemm {
namespace {

std::vector<void (*)(phase_times::Log*)>& setters() {
  static std::vector<void (*)(phase_times::Log*)> all;
  return all;
}

phase_times::Log* log_buffer() {
  static DeviceBuffer<phase_times::Log> log(1);
  return log.data();
}

}  // namespace

namespace detail {
void register_phase_log(void (*set)(phase_times::Log*)) { setters().push_back(set); }
}  // namespace detail

namespace phase_times {

bool compiled_in() {
#ifdef GEMM_MLP_PHASE_TIMES
  return true;
#else
  return false;
#endif
}

void start() {
  if (!compiled_in())
    throw Error(
        "gemm: this build has no phase timestamps: configure with -DGEMM_MLP_PHASE_TIMES=ON");
  Log* log = log_buffer();
  CUDA_CHECK(cudaMemset(log, 0, sizeof(Log)));
  for (auto set : setters()) set(log);
  CUDA_CHECK(cudaDeviceSynchronize());
}

void stop() {
  for (auto set : setters()) set(nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
}

std::vector<Row> collect() {
  if (!compiled_in()) return {};
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<Log> host(1);
  CUDA_CHECK(cudaMemcpy(host.data(), log_buffer(), sizeof(Log), cudaMemcpyDeviceToHost));
  std::vector<Row> rows;
  for (int k = 0; k < kKernels; ++k)
    for (int c = 0; c < kMaxCalls; ++c)
      for (int b = 0; b < kMaxBlocks; ++b) {
        const unsigned long long* ns = host[0].ns[k][c][b];
        if (ns[int(Phase::Start)] == 0) continue;
        Row r{Kernel(k), c, b, {}};
        for (int p = 0; p < kPhases; ++p) r.ns[p] = ns[p];
        rows.push_back(r);
      }
  return rows;
}

const char* kernel_name(Kernel k) {
  switch (k) {
    case Kernel::Pipeline:
      return "wgmma pipeline";
    case Kernel::RegisterA:
      return "register-A wgmma";
    case Kernel::KMajorCopy:
      return "K-major copies";
    case Kernel::MmaSync:
      return "mma.sync tiles";
    default:
      return "?";
  }
}

const char* phase_name(Phase p) {
  static const char* names[] = {"start",  "awaited",      "set-up", "first stage", "K loop",
                                "staged", "slices ready", "stored", "end"};
  return int(p) >= 0 && int(p) < kPhases ? names[int(p)] : "?";
}

}  // namespace phase_times
}  // namespace gemm
