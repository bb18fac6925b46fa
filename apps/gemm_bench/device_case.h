// One shape on the GPU: its random inputs, cuBLAS fp32's result as the reference and the error
// scale |A|·|B|, made once and shared by every variant measured on the shape.
//
// measure(variant):
//   1. Validate: C poisoned with NaN, one run, compared element-wise with the reference:
//      |c − ref| ≤ (tolerance(variant) + tolerance(FP32))·Σ_k|a_ik·b_kj| + floor, where the
//      second term covers the reference's own fp32 rounding (gemm::tolerance, kernels/gemm.h).
//   2. Time (timing.h): warm-up, then the timed runs, C poisoned before each. Timed runs call the
//      variant's launcher directly, so gemm::run's per-call argument checks are not timed. A case
//      whose reps would exceed --max-seconds-per-case runs fewer (at least kMinCappedReps), or is
//      skipped with --skip-slow.
//   3. Time warm (timing.h, time_warm): --warm-calls back-to-back calls in one CUDA graph, as a
//      training step runs them, the operands warm in L2; the median of --warm-replays replays,
//      per call. A case whose calls would exceed --max-seconds-per-case captures fewer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "apps/bench_common/timing.h"
#include "apps/gemm_bench/result.h"
#include "base/device_buffer.h"
#include "kernels/gemm.h"

namespace bench {

class DeviceCase {
 public:
  // Queues everything on timer.stream().
  DeviceCase(const Shape& shape, const Settings& settings, Timer& timer);

  // The device memory a case of this shape takes at its peak (in the constructor).
  static std::uint64_t bytes_needed(const Shape& shape);

  Result measure(const gemm::Variant& v);

  // Validates v (as measure's step 1), then runs `calls` back-to-back calls in one captured graph
  // twice, recording the kernels' phase timestamps on the second replay (gemm::phase_times); the
  // rows recorded. Throws gemm::Error when v is wrong or the build records no phases.
  std::vector<gemm::phase_times::Row> record_phases(const gemm::Variant& v, int calls);

 private:
  // Step 1; false (and r marked Failed) when the variant is wrong.
  bool validate(const gemm::Variant& v, const gemm::Problem& p, Result& r);
  // Step 2: fills r's timing, or marks it Skipped or Capped.
  void time_runs(const gemm::Variant& v, const gemm::Problem& p, Result& r);
  // Step 3, given step 2's estimate of one call's time in seconds.
  void time_warm(const Timer::Step& launch, double est_s, Result& r);
  void poison_c() { c_.fill_bytes(0xFF, timer_.stream()); }  // every float NaN

  Shape shape_;
  Settings settings_;
  Timer& timer_;
  gemm::DeviceBuffer<float> a_, b_, c_, ref_, scale_;
};

}  // namespace bench
